import { AsyncLocalStorage } from 'node:async_hooks'

/** A message the app sent while handling an event, as far as the capture saw it. */
export interface SentMessage {
  text: string | undefined
  channel: string | undefined
}

/**
 * The Slack side of one event being handled. The outgoing captures (WebClient wrapper,
 * response_url observer) find it through {@link slackTurns}, which follows the event's async
 * work the same way the tracker's own turn state does.
 */
export interface SlackTurn {
  /** response_url(s) of the event, so `respond()` calls can be recognised. */
  readonly responseUrls: ReadonlySet<string>
  /** The conversation of the event (for `respond()` records, which name no channel). */
  readonly channel: string | undefined
  /** Called by a capture for every message sent; never throws. */
  sent(message: SentMessage): void
  /** Work that will call {@link SlackTurn.sent} when it settles (a `respond()` awaiting its answer): the tracker waits for it. */
  expect(work: Promise<unknown>): void
}

/** Which {@link SlackTurn} the running code belongs to. One for the module: captures are installed once per client. */
export const slackTurns = new AsyncLocalStorage<SlackTurn>()
