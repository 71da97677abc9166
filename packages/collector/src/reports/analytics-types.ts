/** The answers of the analytics reports (apart from their queries, so the store contract can name them). */
import type { Period } from './periods'

/** One day of the overview's sparklines (a local day of the range's `tz`). */
export interface OverviewDay {
  /** Start of the day, epoch ms. */
  t: number
  sessions: number
  messages: number
  incoming: number
  outgoing: number
  notHandled: number
  feedback: number
}

/** `GET /api/reports/overview`: how many people, sessions and messages, and how well the bot coped. */
export interface OverviewReport {
  users: number
  /** First seen inside the range. */
  newUsers: number
  /** Seen before the range and inside it. */
  returningUsers: number
  sessions: number
  /** Transcripts (threads) with a message in the range. */
  conversations: number
  messages: number
  incoming: number
  outgoing: number
  notHandled: number
  /** notHandled ÷ incoming; 0 without incoming messages. */
  notHandledRate: number
  /** Sessions in which an operator paused the bot or sent a message. */
  handoffs: number
  /** Sessions without a handoff ÷ sessions; 1 without sessions. */
  containmentRate: number
  /**
   * Feedback events with a score, and their average on −1 … 1 (null when none); `byIntent`: per
   * intent of the answer rated ('' when it had none), most rated first.
   */
  feedback: {
    count: number
    average: number | null
    byIntent: Array<{ intent: string; count: number; average: number }>
  }
  /** Per local day of `tz`, oldest first: the sparklines. */
  days: OverviewDay[]
}

/** One cohort of the retention report. */
export interface RetentionCohort {
  /** Start of the period its users were first seen in, epoch ms. */
  start: number
  users: number
  /** Users of the cohort active k periods after it (`active[0] === users`), up to the range's end. */
  active: number[]
}

/** `GET /api/reports/retention`: users first seen in each period of the range, and how many came back. */
export interface RetentionReport {
  period: Period
  cohorts: RetentionCohort[]
  /**
   * Set (true) by `GET /api/reports/retention` (202, `Retry-After`) while the zone's cohorts are
   * being prepared: a zone kept on demand since this or an earlier request; `cohorts` is empty.
   */
  preparing?: boolean
  /** While preparing: the share of users derived so far, 0 … 1. */
  progress?: number
}

/** Whether and how a zone's cohorts are kept (`GET /api/reports/retention?tz=`). */
export interface RetentionZoneState {
  zone: string
  /** `option`: in `retentionZones`; `demand`: kept since a dashboard asked for it; null: not kept (the on-demand limit is reached). */
  kept: 'option' | 'demand' | null
  /** Its cohort table is complete (a zone kept on demand is prepared in the background first). */
  ready: boolean
  /** Share of the users derived so far, 0 … 1 (1 when ready). */
  progress: number
}

/** One path of the paths report: the first intents of sessions, and how many sessions began so. */
export interface PathLine {
  intents: string[]
  sessions: number
}

/** A funnel step: an incoming message's intent or an event's name. */
export interface FunnelStep {
  kind: 'intent' | 'event'
  name: string
}

/** One line of the funnel: the step and how many users reached it in order. */
export interface FunnelLine {
  step: string
  users: number
}
