/**
 * The tables of read-summaries.ts (how they are kept is there): NotHandled phrases per hour with
 * the users whose latest input of the phrase is in that hour, segment counts and users first and
 * last seen per hour.
 */
import type { Dialect } from './dialect'
import { type RollupSpec, rollupDdl } from './rollup-tables'

/** NotHandled inputs per bot × hour × phrase; `users`: users whose latest input of the phrase is in this hour. */
export const NH_PHRASES: RollupSpec = {
  name: 'rollup_nh_phrases',
  columns: { bot: 'text', hour: 'int', phrase: 'text', n: 'int', users: 'int', last_ts: 'int', text: 'text' },
  keys: ['bot', 'hour', 'phrase'],
  sums: ['n', 'users'],
  maxes: ['last_ts'],
  mins: ['text'],
  live: ['n'],
  indexes: [['hour']],
}

/** Each user's latest NotHandled input of each phrase (and how many). */
export const NH_USERS: RollupSpec = {
  name: 'nh_phrase_users',
  columns: { bot: 'text', user_id: 'text', phrase: 'text', last_ts: 'int', n: 'int' },
  keys: ['bot', 'user_id', 'phrase'],
  sums: ['n'],
  maxes: ['last_ts'],
  live: ['n'],
}

/** Users per bot × hour × metadata field × value: first seen (`firsts`) and last seen (`lasts`) in that hour. */
export const SEGMENTS: RollupSpec = {
  name: 'rollup_segments',
  columns: { bot: 'text', hour: 'int', field: 'text', value: 'text', firsts: 'int', lasts: 'int' },
  keys: ['bot', 'hour', 'field', 'value'],
  sums: ['firsts', 'lasts'],
  live: ['firsts', 'lasts'],
  indexes: [['hour']],
}

/**
 * Users per bot × hour, every user with or without metadata: first seen (`firsts`) and last seen
 * (`lasts`) in that hour. The overview's users of a range with nothing stored after it are
 * `Σ lasts (hour ≥ from)`, its new users `Σ firsts` over the range: rows per hour, not per user.
 */
export const USER_SEEN: RollupSpec = {
  name: 'rollup_user_seen',
  columns: { bot: 'text', hour: 'int', firsts: 'int', lasts: 'int' },
  keys: ['bot', 'hour'],
  withoutRowid: true,
  sums: ['firsts', 'lasts'],
  live: ['firsts', 'lasts'],
  indexes: [['hour']],
}

/**
 * What each user is counted as in {@link USER_SEEN} and {@link SEGMENTS}: first and last hour,
 * pairs as JSON (`[]` for a user without metadata: counted in the first only).
 */
export const USER_SEGMENTS: RollupSpec = {
  name: 'user_segments',
  columns: { bot: 'text', user_id: 'text', first_hour: 'int', last_hour: 'int', pairs: 'text' },
  keys: ['bot', 'user_id'],
}

/** These tables, in the order writers lock them (after the rollups). */
export const READ_SUMMARIES: readonly RollupSpec[] = [NH_PHRASES, NH_USERS, SEGMENTS, USER_SEEN, USER_SEGMENTS]

/** CREATE statements of these tables. */
export const readSummariesDdl = (d: Dialect): string => rollupDdl(d, READ_SUMMARIES)
