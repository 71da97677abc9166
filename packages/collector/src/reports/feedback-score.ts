/**
 * A feedback event's score on one scale for averages: core's `tracker.feedback()` posts the spec
 * `customEvent` named `feedback` with `extraInfo: { score, scale: 'thumbs' | 'stars', comment? }`.
 * Thumbs (−1 … 1) stay as they are; stars (1 … 5) become (s − 3) / 2, so 1 star is −1 and 5 are 1.
 * Pure.
 */

/** The event name that carries feedback (core's `FEEDBACK_EVENT`). */
export const FEEDBACK_EVENT = 'feedback'

/**
 * The score of a feedback event's body normalised to −1 … 1; null when the body carries no valid
 * score (the event is stored and listed, not averaged). Without `scale`, a score above 1 is stars.
 *
 * @example feedbackScore({ extraInfo: { score: 4, scale: 'stars' } }) // 0.5
 */
export function feedbackScore(body: unknown): number | null {
  if (typeof body !== 'object' || body === null) return null
  const extra = (body as Record<string, unknown>).extraInfo
  if (typeof extra !== 'object' || extra === null) return null
  const { score, scale } = extra as Record<string, unknown>
  if (typeof score !== 'number' || !Number.isFinite(score)) return null
  const stars = scale === 'stars' || (scale === undefined && score > 1)
  if (stars) return score >= 1 && score <= 5 ? (score - 3) / 2 : null
  if (scale !== undefined && scale !== 'thumbs') return null
  return score >= -1 && score <= 1 ? score : null
}
