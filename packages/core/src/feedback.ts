import { InvalidRecordError } from './errors'
import type { CustomEvent } from './types'
import { optionalString, requireNonEmptyString, requireObject } from './validate'

/** The name of the `customEvent` that carries feedback: every tracking service accepts it as is. */
export const FEEDBACK_EVENT = 'feedback'

/**
 * A user's rating of the bot's last answer (see {@link Tracker.feedback}).
 *
 * @example { userId: 'u1', conversationId: 'c1', score: -1, comment: 'that did not help' }
 */
export interface Feedback {
  userId: string
  /** The conversation rated; the collector otherwise takes the user's current one. */
  conversationId?: string
  /**
   * Thumbs: −1 … 1 (−1 down, 0 neutral, 1 up; fractions allowed), or stars: a whole 1 … 5.
   * A score of 2 … 5 is read as stars; −1 … 1 as thumbs unless `scale: 'stars'` says 1 is one star.
   */
  score: number
  /** Which scale `score` is on; default from its value (see `score`). */
  scale?: FeedbackScale
  /** What the user wrote with the rating. */
  comment?: string
}

/** `thumbs`: −1 … 1; `stars`: a whole 1 … 5. */
export type FeedbackScale = 'thumbs' | 'stars'

const CONTEXT = 'feedback'

/**
 * The spec `customEvent` that carries a feedback: name `feedback`, `extraInfo: { score, scale,
 * comment? }`. Throws {@link InvalidRecordError} naming the field when the feedback is not valid.
 *
 * @example feedbackEvent({ userId: 'u1', score: 5 }).extraInfo // { score: 5, scale: 'stars' }
 */
export function feedbackEvent(feedback: Feedback): CustomEvent {
  const f = requireObject(feedback, '', CONTEXT)
  const userId = requireNonEmptyString(f.userId, 'userId', CONTEXT)
  optionalString(f.conversationId, 'conversationId', CONTEXT)
  optionalString(f.comment, 'comment', CONTEXT)
  const score = f.score
  if (typeof score !== 'number' || !Number.isFinite(score))
    throw new InvalidRecordError('score', 'is required: a number, −1 … 1 (thumbs) or a whole 1 … 5 (stars)', CONTEXT)
  if (f.scale !== undefined && f.scale !== 'thumbs' && f.scale !== 'stars')
    throw new InvalidRecordError('scale', "must be 'thumbs' or 'stars'", CONTEXT)
  const scale: FeedbackScale = f.scale ?? (score > 1 ? 'stars' : 'thumbs')
  if (scale === 'thumbs' && (score < -1 || score > 1))
    throw new InvalidRecordError('score', 'must be within −1 … 1 on the thumbs scale', CONTEXT)
  if (scale === 'stars' && (!Number.isInteger(score) || score < 1 || score > 5))
    throw new InvalidRecordError('score', 'must be a whole 1 … 5 on the stars scale', CONTEXT)
  const extraInfo: CustomEvent['extraInfo'] = { score, scale }
  if (typeof f.comment === 'string') extraInfo.comment = f.comment
  return {
    type: 'customEvent',
    name: FEEDBACK_EVENT,
    userId,
    ...(typeof f.conversationId === 'string' ? { conversationId: f.conversationId } : {}),
    extraInfo,
  }
}
