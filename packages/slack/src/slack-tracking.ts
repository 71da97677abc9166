import type { CallOptions, Intent, SlackRecord, Tracker, TurnState } from '@convotrack/core'
import type { AnyMiddlewareArgs, Middleware } from '@slack/bolt'
import {
  conversationOf,
  type IncomingMessage,
  isUserMessage,
  readIncoming,
  responseUrlsOf,
  type SlackMessageEventLike,
} from './incoming'
import { addPending } from './pending'
import { type ChatClient, capturePostMessage } from './post-message-capture'
import { RecentKeys } from './recent-keys'
import { captureRespond } from './respond-capture'
import { type TeamInfoClient, TeamNames } from './team-names'
import { type SentMessage, type SlackTurn, slackTurns } from './turn'

/** Options of {@link slackTracking}. */
export interface SlackTrackingOptions {
  /** Which `message` / `app_mention` events are a user's message and get tracked. Default {@link isUserMessage}. */
  trackMessage?: (event: SlackMessageEventLike) => boolean
  /** Track `block_actions` (button clicks, menu choices) as incoming records. Default true. */
  trackActions?: boolean
  /** Check `tracker.pauses` (key: the channel id) and hold back listeners while paused. Default true. */
  pause?: boolean
  /** Name teams with `team.info` (needs the `team:read` scope), cached per team. False: the name is the team id. Default true. */
  teamNames?: boolean
  /** Longest wait for `team.info` before the id stands in for the name, in ms. Default 3000. */
  teamNameTimeoutMs?: number
  /** Track `respond()` (observed on Node's fetch, see the README). Default true. */
  trackRespond?: boolean
}

/** What {@link slackTracking} returns: a Bolt global middleware, for `app.use()`. */
export type SlackTrackingMiddleware = Middleware<AnyMiddlewareArgs>

/** The parts of Bolt's middleware args read here (Bolt 3 to 5 all have them). */
interface BoltArgs {
  body: unknown
  context: { teamId?: string; enterpriseId?: string; botUserId?: string; botId?: string }
  client?: ChatClient & TeamInfoClient
  ack?: (response?: unknown) => Promise<void>
  next: () => Promise<void>
}

const TEAM_NAME_RETRY_MS = 5 * 60_000

/**
 * Tracks a Bolt app: every user message and button click it receives, every message it sends
 * while handling them (`say()`, `client.chat.postMessage`, `respond()`), with pause. Each event
 * runs in its own tracker turn, so `tracker.setNotHandled()` / `tracker.setOutgoingIntent()`
 * inside a listener apply to that event only. No network I/O happens before the listeners run,
 * and nothing here ever rejects the event's handling.
 *
 * @example app.use(slackTracking(tracker))
 */
export function slackTracking(tracker: Tracker, options: SlackTrackingOptions = {}): SlackTrackingMiddleware {
  const read = { trackMessage: options.trackMessage ?? isUserMessage, trackActions: options.trackActions !== false }
  const checkPause = options.pause !== false
  const report = (error: unknown): void => tracker.reportError(error)
  const recent = new RecentKeys(2000)
  const teamNames = new TeamNames({
    lookup: options.teamNames !== false,
    timeoutMs: options.teamNameTimeoutMs ?? 3000,
    retryAfterMs: TEAM_NAME_RETRY_MS,
    onWaiting: (work) => addPending(tracker, work),
    onError: (error) =>
      report(
        new Error(`team.info failed, using the team id as its name: ${(error as Error)?.message ?? error}`, {
          cause: error,
        }),
      ),
  })
  if (options.trackRespond !== false) captureRespond()

  const middleware = async (boltArgs: unknown): Promise<void> => {
    const args = boltArgs as BoltArgs
    let turn: TrackedTurn
    try {
      capturePostMessage(args.client)
      const incoming = readIncoming(args.body, read)
      const body = args.body as { team_id?: unknown; team?: { id?: unknown } } | undefined
      const teamId =
        args.context?.teamId ??
        incoming?.teamId ??
        str(body?.team_id) ??
        str(body?.team?.id) ??
        args.context?.enterpriseId
      turn = new TrackedTurn({
        tracker,
        incoming,
        teamId,
        botId: args.context?.botUserId ?? args.context?.botId ?? '',
        channel: incoming?.channel ?? conversationOf(args.body),
        responseUrls: responseUrlsOf(args.body),
        client: args.client,
        teamNames,
        recent,
        report,
      })
    } catch (error) {
      report(error)
      return args.next()
    }
    return tracker.withTurn(() => slackTurns.run(turn, () => handle(turn, args)))
  }

  async function handle(turn: TrackedTurn, args: BoltArgs): Promise<void> {
    turn.state = tracker.currentTurn()
    const incoming = turn.incoming
    if (incoming && checkPause && (await tracker.isPaused(incoming.channel))) {
      turn.finish()
      // Interactive payloads wait for an ack the listeners would have sent; Slack shows an error without one.
      if (!incoming.isEvent && typeof args.ack === 'function') {
        try {
          await args.ack()
        } catch (error) {
          report(error)
        }
      }
      return
    }
    try {
      await args.next()
    } finally {
      turn.finish()
    }
  }

  return middleware as SlackTrackingMiddleware
}

interface TurnDeps {
  tracker: Tracker
  incoming: IncomingMessage | undefined
  teamId: string | undefined
  botId: string
  channel: string | undefined
  responseUrls: ReadonlySet<string>
  client: TeamInfoClient | undefined
  teamNames: TeamNames
  recent: RecentKeys
  report: (error: unknown) => void
}

/**
 * One event being handled. Its records are handed to the tracker when the listeners are done,
 * incoming first and then what was sent, so a `setNotHandled()` or `setOutgoingIntent()` made
 * anywhere in the listener is on them; messages sent later (a timer started by the listener)
 * go out as they happen.
 */
class TrackedTurn implements SlackTurn {
  state: TurnState | undefined
  readonly incoming: IncomingMessage | undefined
  readonly channel: string | undefined
  readonly responseUrls: ReadonlySet<string>
  private done = false
  private readonly held: Array<{ message: SentMessage; intent: Intent | undefined }> = []

  constructor(private readonly deps: TurnDeps) {
    this.incoming = deps.incoming
    this.channel = deps.channel
    this.responseUrls = deps.responseUrls
  }

  sent(message: SentMessage): void {
    try {
      const entry = { message, intent: this.state?.outgoingIntent }
      if (this.done) this.handOver(false, [entry])
      else this.held.push(entry)
    } catch (error) {
      this.deps.report(error)
    }
  }

  /** The listeners are done (or were held back by pause): hand the records over. Never throws. */
  finish(): void {
    if (this.done) return
    this.done = true
    try {
      this.handOver(true, this.held.splice(0))
    } catch (error) {
      this.deps.report(error)
    }
  }

  private handOver(withIncoming: boolean, sent: Array<{ message: SentMessage; intent: Intent | undefined }>): void {
    const incoming = withIncoming ? this.incoming : undefined
    if (!incoming && sent.length === 0) return
    const { teamId, tracker, report } = this.deps
    if (!teamId) {
      report(new Error('slack: the event names no team (team_id), so its records cannot be tracked'))
      return
    }
    this.deps.teamNames.withName(teamId, this.deps.client, (name) => {
      const base = { team: { id: teamId, name }, bot: { id: this.deps.botId } }
      const state = this.state
      if (
        incoming &&
        !(incoming.message.ts && this.deps.recent.seen(`${teamId}:${incoming.channel}:${incoming.message.ts}`))
      ) {
        const record: SlackRecord = { ...base, message: incoming.message }
        if (incoming.token !== undefined) record.token = incoming.token
        const opts: CallOptions = { notHandled: state?.notHandled === true, userMetadata: state?.userMetadata }
        attempt(report, () => tracker.slack.logIncoming(record, opts))
      }
      for (const { message, intent } of sent) {
        const record = {
          ...base,
          message: { type: 'message', text: message.text, channel: message.channel },
        } as SlackRecord
        if (message.text === undefined) delete record.message.text
        const opts: CallOptions = { intent: intent ?? state?.outgoingIntent, userMetadata: state?.userMetadata }
        attempt(report, () => tracker.slack.logOutgoing(record, opts))
      }
    })
  }
}

function attempt(report: (error: unknown) => void, fn: () => unknown): void {
  try {
    fn()
  } catch (error) {
    report(error)
  }
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined
}
