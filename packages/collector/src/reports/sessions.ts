/**
 * Sessions, pure: a user's run of messages with no gap longer than the session gap, within one
 * explicit `sessionId`. Stored sessions and new messages join in any order (an imported day
 * arriving after today's traffic, a message that bridges two sessions), so the sessions of a
 * user are the same whatever order their messages were stored in.
 */
import { PATH_DEPTH_MAX } from './analytics-tables'

/** One session of one (bot, user, sid). */
export interface Session {
  bot: string
  userId: string
  /** The explicit `sessionId` of its messages; '' when they carried none. */
  sid: string
  start: number
  end: number
  messages: number
  incoming: number
  /** The first incoming intents, `[ts, intent]`, in time order (at most PATH_DEPTH_MAX). */
  intents: Array<[number, string]>
  /** Counted as handed off (handoff-summary.ts): an operator's action lies in it; absent: not yet looked for. */
  handoff?: boolean
}

/** A message as sessions see it. */
export interface SessionPoint {
  ts: number
  incoming: boolean
  /** Its intent when incoming (NotHandled included), else null. */
  intent: string | null
}

const firstIntents = (list: Array<[number, string]>): Array<[number, string]> =>
  [...list].sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0)).slice(0, PATH_DEPTH_MAX)

/**
 * The sessions of one (bot, user, sid) after adding `points` to the stored sessions `existing`
 * that may touch them: everything sorted by start, joined while the gap to the next is at most
 * `gapMs`.
 */
export function joinSessions(
  key: { bot: string; userId: string; sid: string },
  existing: readonly Session[],
  points: readonly SessionPoint[],
  gapMs: number,
): Session[] {
  const pieces: Session[] = [
    ...existing.map((s) => ({ ...s, intents: [...s.intents] })),
    ...points.map(
      (p): Session => ({
        ...key,
        start: p.ts,
        end: p.ts,
        messages: 1,
        incoming: p.incoming ? 1 : 0,
        intents: p.incoming && p.intent !== null ? [[p.ts, p.intent]] : [],
      }),
    ),
  ].sort((a, b) => a.start - b.start || a.end - b.end)
  const out: Session[] = []
  for (const piece of pieces) {
    const last = out[out.length - 1]
    if (last && piece.start - last.end <= gapMs) {
      last.end = Math.max(last.end, piece.end)
      last.messages += piece.messages
      last.incoming += piece.incoming
      last.intents = firstIntents([...last.intents, ...piece.intents])
    } else out.push({ ...piece, intents: firstIntents(piece.intents) })
  }
  return out
}
