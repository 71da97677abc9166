import type { CallOptions, HeldTurn, Intent, SlackRecord, Tracker, TurnState } from '@convotrack/core'
import { currentTurn, holdTurn, holdWork, reportError } from '@convotrack/core/adapter'
import type { AnyMiddlewareArgs, Middleware } from '@slack/bolt'
import {
  conversationOf,
  type IncomingMessage,
  isUserMessage,
  readIncoming,
  responseUrlsOf,
  type SlackMessageEventLike,
} from './incoming'
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
 * inside a listener apply to that event only. The only I/O before the listeners is the pause
 * check (none with the default in-memory store, one round trip with a Redis store); the team
 * name lookup happens after them. Nothing here ever rejects the event's handling.
 *
 * @example app.use(slackTracking(tracker))
 */
export function slackTracking(tracker: Tracker, options: SlackTrackingOptions = {}): SlackTrackingMiddleware {
  const read = { trackMessage: options.trackMessage ?? isUserMessage, trackActions: options.trackActions !== false }
  const checkPause = options.pause !== false
  const report = (error: unknown): void => reportError(tracker, error)
  const recent = new RecentKeys(2000)
  const teamNames = new TeamNames({
    lookup: options.teamNames !== false,
    timeoutMs: options.teamNameTimeoutMs ?? 3000,
    retryAfterMs: TEAM_NAME_RETRY_MS,
    onWaiting: (work) => holdWork(tracker, work),
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
    turn.open(currentTurn(tracker))
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
 * One event being handled. Its records are held in a tracker turn buffer until the listeners
 * are done, incoming first and then what was sent, so a `setNotHandled()` or
 * `setOutgoingIntent()` made anywhere in the listener is on them; messages sent later (a timer
 * started by the listener) go out as they happen. A record waiting for its team's name is
 * registered with the tracker too, so `flush()` and `close()` see it.
 */
class TrackedTurn implements SlackTurn {
  readonly incoming: IncomingMessage | undefined
  readonly channel: string | undefined
  readonly responseUrls: ReadonlySet<string>
  private held: HeldTurn | undefined
  private state: TurnState | undefined
  private noTeamReported = false

  constructor(private readonly deps: TurnDeps) {
    this.incoming = deps.incoming
    this.channel = deps.channel
    this.responseUrls = deps.responseUrls
  }

  /** Opens the turn's buffer (inside the tracker turn) and holds the incoming record. */
  open(state: TurnState | undefined): void {
    this.state = state
    this.held = holdTurn(this.deps.tracker, state)
    const incoming = this.incoming
    if (incoming) this.held.hold((turn) => this.logIncoming(incoming, turn))
  }

  sent(message: SentMessage): void {
    try {
      const intent = this.state?.outgoingIntent
      const log = (turn: TurnState | undefined): void => this.logOutgoing(message, intent, turn)
      if (this.held) this.held.hold(log)
      else log(this.state)
    } catch (error) {
      this.deps.report(error)
    }
  }

  expect(work: Promise<unknown>): void {
    holdWork(this.deps.tracker, work)
  }

  /** The listeners are done (or were held back by pause): hand the records over. Never throws. */
  finish(): void {
    this.held?.end()
  }

  private logIncoming(incoming: IncomingMessage, turn: TurnState | undefined): void {
    const { recent, tracker, report } = this.deps
    const opts: CallOptions = { notHandled: turn?.notHandled === true, userMetadata: turn?.userMetadata }
    this.withTeam((base, teamId) => {
      if (incoming.message.ts && recent.seen(`${teamId}:${incoming.channel}:${incoming.message.ts}`)) return
      const record: SlackRecord = { ...base, message: incoming.message }
      if (incoming.token !== undefined) record.token = incoming.token
      attempt(report, () => tracker.slack.logIncoming(record, opts))
    })
  }

  private logOutgoing(message: SentMessage, intent: Intent | undefined, turn: TurnState | undefined): void {
    const { tracker, report } = this.deps
    const opts: CallOptions = { intent: intent ?? turn?.outgoingIntent, userMetadata: turn?.userMetadata }
    this.withTeam((base) => {
      const record = {
        ...base,
        message: { type: 'message', text: message.text, channel: message.channel },
      } as SlackRecord
      if (message.text === undefined) delete record.message.text
      attempt(report, () => tracker.slack.logOutgoing(record, opts))
    })
  }

  /** Runs `use` with the record's team and bot once the team's name is known (in order). */
  private withTeam(use: (base: Pick<SlackRecord, 'team' | 'bot'>, teamId: string) => void): void {
    const { teamId, botId } = this.deps
    if (!teamId) {
      if (!this.noTeamReported)
        this.deps.report(new Error('slack: the event names no team (team_id), so its records cannot be tracked'))
      this.noTeamReported = true
      return
    }
    this.deps.teamNames.withName(teamId, this.deps.client, (name) =>
      use({ team: { id: teamId, name }, bot: { id: botId } }, teamId),
    )
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
