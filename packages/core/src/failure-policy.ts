/**
 * The delivery rules for a failed attempt, as one pure function: (what happened, the engine's
 * state, now) → a decision. No timers, no sockets, no randomness of its own (the backoff jitter
 * is passed in), so every rule is a row of a table test (`failure-policy.test.ts`) and the core
 * README's "Delivery rules" table lists the same rows. The transport only applies decisions.
 */
import { backoffDelay, isRetryableStatus, type RetryOptions } from './retry'

/** Consecutive rate-limit answers (no success between) that mean "everything is refused": close the gate. */
export const LIMITED_RUN_GATES = 8
/** Failures without an answer this close together are one burst: the service's trouble, not the record's. */
export const NO_ANSWER_BURST_MS = 1_000
/** Attempts a shipment may be spared by such bursts before they count (a record that itself kills the service still fails). */
export const MAX_SPARED = 20
/** Longest gate step while the service is unreachable: one cheap probe per second at most. */
export const GATE_MAX_MS = 1_000

/** What happened to one attempt. */
export interface AttemptOutcome {
  /** The service's answer; undefined when none came (refused, reset, socket error, deadline). */
  status?: number | undefined
  /** The answer's `Retry-After`, in ms. */
  retryAfterMs?: number | undefined
  /** No answer because no connection could be made (refused, DNS, unreachable host). */
  connectFailed?: boolean | undefined
  /** No answer, on a kept-alive socket of an earlier request (the keep-alive race). */
  stale?: boolean | undefined
}

/** The request that failed. */
export interface ShipmentFacts {
  batch: boolean
  /** Attempts made, this one included. */
  attempts: number
  /** Attempts given back by bursts so far. */
  spared: number
  /**
   * Its place in the order requests were sent (grows by one per send). Order, not time: two
   * requests sent in the same millisecond are still one before the other.
   */
  seq: number
  /** The gate round it was sent in. */
  round: number
}

/** What the rules read of the engine. The transport owns it; decisions say how it changes. */
export interface EngineState {
  /** `close()` is tearing the engine down. */
  shuttingDown: boolean
  maxAttempts: number
  /** `seq` of the newest request the service answered (any status). */
  answeredSeq: number
  /** `seq` of the newest request the service served (answered with anything but 503). */
  servedSeq: number
  /** When the last failure without an answer came. */
  noAnswerAt: number
  /** The last failure without an answer that spent its attempt, alone so far. */
  lone: { isThis: boolean; spared: number } | undefined
  /** Rate-limit answers in a row, with no success between. */
  limitedRun: number
  /** The gate's current round (bumped on every closing). */
  gateRound: number
  /** The gate let one probe through and waits for its answer. */
  probing: boolean
  /** Consecutive closings for unreachability: the backoff step of the next one. */
  connectFailures: number
}

/** What becomes of the request. */
export type Verdict =
  /** It fails for good (reported, counted `failed`). */
  | 'fail'
  /** It goes again after `delayMs`. */
  | 'retry'
  /** Back in line behind the gate (sent when it opens; at once when it is open). */
  | 'gate'
  /** The batch endpoint is missing: its records go back to their lanes, single records from now on. */
  | 'unbatch'

export interface FailureDecision {
  verdict: Verdict
  /** `fail`: the failure was of a kind that retries (its error says "gave up after n attempts"). */
  retryable: boolean
  /** `retry`: ms until it goes again. */
  delayMs: number
  /** `retry` on its last attempt, alone so far: at `delayMs` it fails unless a burst gave the attempt back. */
  judge: boolean
  /** The attempt counts against `maxAttempts`. */
  spendAttempt: boolean
  /** Spared by a burst: its `spared` count goes up. */
  spare: boolean
  /** The lone failure before this one was the first of a burst: it gets its attempt back. */
  spareLone: boolean
  /**
   * The lone failure afterwards: `keep` the one there is, `clear` it, or `this` request (its
   * attempt counted, alone so far: it may still come back).
   */
  lone: 'keep' | 'clear' | 'this'
  /** Close the gate for this many ms (every request waits, then one probe). */
  closeGateMs: number | undefined
  /** The closing is a 503's: a request sent after this one and served reopens the gate. */
  closedByUnavailable: boolean
  /** Tell the pacer: a rate-limit answer. */
  pace: boolean
  /** Tell the limiter: a congestion signal (it may shrink the limit). */
  shrink: boolean
  /** The engine's state after this failure. */
  next: Pick<EngineState, 'answeredSeq' | 'servedSeq' | 'noAnswerAt' | 'limitedRun' | 'probing' | 'connectFailures'>
}

/**
 * Decides what a failed attempt means. `random` is the backoff jitter (0..1).
 */
export function decideFailure(
  what: AttemptOutcome,
  s: ShipmentFacts,
  state: Readonly<EngineState>,
  now: number,
  retry: Required<RetryOptions>,
  random: () => number = Math.random,
): FailureDecision {
  const d: FailureDecision = {
    verdict: 'fail',
    retryable: true,
    delayMs: 0,
    judge: false,
    spendAttempt: true,
    spare: false,
    spareLone: false,
    lone: 'keep',
    closeGateMs: undefined,
    closedByUnavailable: false,
    pace: false,
    shrink: false,
    next: {
      answeredSeq: state.answeredSeq,
      servedSeq: state.servedSeq,
      noAnswerAt: state.noAnswerAt,
      limitedRun: state.limitedRun,
      probing: state.probing,
      connectFailures: state.connectFailures,
    },
  }
  const { status } = what
  if (state.shuttingDown) return d
  if (s.batch && (status === 404 || status === 405)) {
    d.verdict = 'unbatch'
    d.spendAttempt = false
    return d
  }
  return status !== undefined
    ? answered(d, what, status, s, state, retry, random)
    : noAnswer(d, what, s, state, now, retry, random)
}

function answered(
  d: FailureDecision,
  what: AttemptOutcome,
  status: number,
  s: ShipmentFacts,
  state: Readonly<EngineState>,
  retry: Required<RetryOptions>,
  random: () => number,
): FailureDecision {
  const next = d.next
  if (s.seq > next.answeredSeq) next.answeredSeq = s.seq // the service answers
  next.connectFailures = 0
  const unavailable = status === 503 && what.retryAfterMs !== undefined
  if (!unavailable && s.seq > next.servedSeq) next.servedSeq = s.seq
  const limited = status === 429
  if (!limited && !unavailable) next.probing = false
  if (!isRetryableStatus(status)) {
    d.retryable = false
    return d
  }
  const retryAfter = what.retryAfterMs === undefined ? undefined : Math.min(what.retryAfterMs, retry.maxRetryAfterMs)
  if (unavailable) {
    // 503 + Retry-After: the service (not this request) is unavailable until then. Every request
    // waits, unless one sent after this one was served meanwhile: then it was one instance, and
    // only this request waits. The service answered, so the attempt counts.
    if (s.attempts >= state.maxAttempts) return d
    if (state.servedSeq > s.seq) return retryIn(d, retryAfter as number)
    d.verdict = 'gate'
    if (s.round === state.gateRound) {
      d.closeGateMs = retryAfter
      d.closedByUnavailable = true
    }
    return d
  }
  if (limited) {
    d.pace = true
    next.limitedRun = state.limitedRun + 1
    if (s.attempts < state.maxAttempts && (state.probing || next.limitedRun >= LIMITED_RUN_GATES)) {
      // Everything is refused: every request waits out the Retry-After, then probe. The service
      // answered, so the attempt counts: a service that refuses for good fails records.
      d.verdict = 'gate'
      if (s.round === state.gateRound) d.closeGateMs = retryAfter ?? backoffDelay(1, retry, random)
      return d
    }
  } else {
    d.shrink = true
  }
  if (s.attempts >= state.maxAttempts) return d
  return retryIn(d, limited && retryAfter !== undefined ? retryAfter : backoffDelay(s.attempts, retry, random))
}

function noAnswer(
  d: FailureDecision,
  what: AttemptOutcome,
  s: ShipmentFacts,
  state: Readonly<EngineState>,
  now: number,
  retry: Required<RetryOptions>,
  random: () => number,
): FailureDecision {
  const connect = what.connectFailed === true
  if (what.stale && !connect) {
    // A kept-alive socket the service had closed: again at once, on another connection, spending
    // no attempt. Its idempotency key makes a resend safe; it cannot loop, since a socket that
    // failed is not reused.
    d.verdict = 'gate'
    d.spendAttempt = false
    return d
  }
  const gateRetry = { ...retry, maxDelayMs: Math.min(retry.maxDelayMs, GATE_MAX_MS) }
  d.shrink = !connect
  d.lone = 'clear'
  const burst = now - state.noAnswerAt < NO_ANSWER_BURST_MS
  d.next.noAnswerAt = now
  const lone = state.lone
  // The first failure of this burst could not know it was one: its attempt back.
  d.spareLone = burst && lone !== undefined && !lone.isThis && lone.spared < MAX_SPARED
  if (connect || state.answeredSeq < s.seq) {
    // Nothing sent after this request was answered: the service is unreachable (or went away
    // while it was in flight), not this request's fault. Hold everything (one gate step per
    // round), spend no attempt.
    d.verdict = 'gate'
    d.spendAttempt = false
    if (s.round === state.gateRound) {
      d.next.connectFailures = state.connectFailures + 1
      d.closeGateMs = backoffDelay(d.next.connectFailures, gateRetry, random)
    }
    return d
  }
  if (burst && s.spared < MAX_SPARED) {
    // Others failed the same way within the burst window (a service restarting, flapping,
    // dropping its connections): retried with backoff, spending no attempt.
    d.spendAttempt = false
    d.spare = true
    return retryIn(d, backoffDelay(s.spared + 1, gateRetry, random))
  }
  // Alone so far: the attempt counts, unless another failure without an answer follows within
  // the burst window. On the last attempt the verdict waits for that window.
  d.lone = 'this'
  if (s.attempts >= state.maxAttempts) {
    d.judge = true
    return retryIn(d, NO_ANSWER_BURST_MS)
  }
  return retryIn(d, backoffDelay(s.attempts, retry, random))
}

function retryIn(d: FailureDecision, delayMs: number): FailureDecision {
  d.verdict = 'retry'
  d.delayMs = delayMs
  return d
}

/**
 * The request numbered `seq` was served. True when that reopens a gate a 503 closed: it was sent
 * after the request whose 503 closed it, so the 503 came from one instance, not the service.
 */
export function servedReopens(seq: number, unavailableSeq: number | undefined): boolean {
  return unavailableSeq !== undefined && seq > unavailableSeq
}
