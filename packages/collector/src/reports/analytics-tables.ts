/**
 * The summaries the analytics reports (overview, retention, sessions, feedback) read, beside the
 * report summaries of rollup-tables.ts: the same spec shape and merges, created by their own
 * migration step. `sessions` is not a sum: its rows are replaced as sessions grow and join
 * (analytics-writes.ts), and every replacement's share goes to `rollup_sessions`, which is.
 */
import type { Dialect } from './dialect'
import { dayCopy, type RollupSpec, rollupDdl } from './rollup-tables'

/**
 * One row per session: a user's run of messages with no gap over the collector's
 * `sessionGapMinutes`, within one explicit `sessionId` (`sid`, '' for none). `intents`: JSON
 * `[[ts, intent], …]` of its first {@link PATH_DEPTH_MAX} incoming intents (the paths report).
 * `handoff`: 1 when an operator's action lies in it (handoff-summary.ts; PostgreSQL migration 27,
 * SQLite step 23 added it: null before).
 */
export const SESSIONS: RollupSpec = {
  name: 'sessions',
  columns: {
    bot: 'text',
    user_id: 'text',
    sid: 'text',
    start_ts: 'int',
    end_ts: 'int',
    messages: 'int',
    incoming: 'int',
    intents: 'text',
    handoff: 'int',
  },
  keys: ['bot', 'user_id', 'sid', 'start_ts'],
  sums: ['messages', 'incoming'],
  maxes: ['end_ts', 'handoff'],
  indexes: [['start_ts'], ['bot', 'start_ts']],
}

/** Sessions per bot × hour of their start (signed changes as sessions grow or join): the overview. */
export const SESSION_HOURS: RollupSpec = {
  name: 'rollup_sessions',
  columns: { bot: 'text', hour: 'int', sessions: 'int' },
  keys: ['bot', 'hour'],
  withoutRowid: true,
  sums: ['sessions'],
  live: ['sessions'],
  indexes: [['hour']],
}

/**
 * Feedback per bot × hour × the intent of the answer rated (the thread's last outgoing message
 * before it; '' when none had an intent): count and the sum of scores normalised to −1 … 1.
 */
export const FEEDBACK: RollupSpec = {
  name: 'rollup_feedback',
  columns: { bot: 'text', hour: 'int', intent: 'text', n: 'int', score_sum: 'real' },
  keys: ['bot', 'hour', 'intent'],
  withoutRowid: true,
  sums: ['n', 'score_sum'],
  live: ['n'],
  indexes: [['hour']],
}

/**
 * Users active per bot × hour: the partial days at a range's edges (whole days read
 * rollup_user_days). Keyed by hour first (the reads take a range of hours); no other index.
 */
export const USER_HOURS: RollupSpec = {
  name: 'rollup_user_hours',
  columns: { bot: 'text', hour: 'int', user_id: 'text', messages: 'int' },
  keys: ['hour', 'bot', 'user_id'],
  withoutRowid: true,
  sums: ['messages'],
  live: ['messages'],
}

/**
 * Funnel steps per bot × hour × step (`intent` of an incoming message or `event` name) × user:
 * how many times, the first and the last time in that hour. The funnel orders a user's steps by
 * these times (exact across hours; within one hour a step after another is taken at its latest).
 */
export const USER_STEPS: RollupSpec = {
  name: 'rollup_user_steps',
  columns: {
    bot: 'text',
    hour: 'int',
    kind: 'text',
    name: 'text',
    user_id: 'text',
    n: 'int',
    first_ts: 'int',
    last_ts: 'int',
  },
  keys: ['bot', 'hour', 'kind', 'name', 'user_id'],
  sums: ['n'],
  mins: ['first_ts'],
  maxes: ['last_ts'],
  // A step's rows of a range; one user's hours of one step, in order (the funnel's next steps).
  indexes: [
    ['kind', 'name', 'hour'],
    ['kind', 'name', 'bot', 'user_id', 'hour'],
    ['bot', 'user_id', 'hour'],
  ],
}

/**
 * {@link FEEDBACK} every intent together, per bot × hour: the overview's feedback count, average
 * and days read one row per hour, whatever the number of intents rated (PostgreSQL migration 28,
 * SQLite step 24). Kept from the same changes (analytics-writes.ts `mirrorFeedback`).
 */
export const FEEDBACK_HOURS: RollupSpec = {
  name: 'rollup_feedback_hours',
  columns: { bot: 'text', hour: 'int', n: 'int', score_sum: 'real' },
  keys: ['bot', 'hour'],
  withoutRowid: true,
  sums: ['n', 'score_sum'],
  live: ['n'],
  indexes: [['hour']],
}

/**
 * {@link FEEDBACK} per bot × UTC day × rated intent: the overview's average per intent reads a
 * range's whole UTC days here and only the hours of its partial first and last days from the hour
 * rows — 24 times fewer rows.
 */
export const FEEDBACK_DAYS: RollupSpec = dayCopy(FEEDBACK, 'rollup_feedback_days')

/** Deepest path the paths report gives: the first intents each session keeps. */
export const PATH_DEPTH_MAX = 8

/** Created by the analytics migration (funnel steps come with the next one). */
export const ANALYTICS_ROLLUPS: readonly RollupSpec[] = [
  SESSIONS,
  SESSION_HOURS,
  FEEDBACK,
  FEEDBACK_HOURS,
  FEEDBACK_DAYS,
  USER_HOURS,
]

/** CREATE TABLE / INDEX of the analytics summaries and the indexes their reads need on other tables. */
export function analyticsDdl(d: Dialect): string {
  const users = d.table('user_profiles')
  const audit = d.table('audit')
  return [
    rollupDdl(d, ANALYTICS_ROLLUPS),
    // New users of a range (first seen in it); operator actions of a range (handoffs).
    `CREATE INDEX IF NOT EXISTS ${users}_first_ts ON ${users} (first_ts);`,
    `CREATE INDEX IF NOT EXISTS ${audit}_ts ON ${audit} (ts);`,
  ].join('\n')
}
