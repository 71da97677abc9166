/**
 * Retention zones kept on demand: a dashboard asking for cohorts in a zone that is not kept makes
 * it kept (up to the collector's `retentionZonesOnDemand`). The zone is a row of the zones table
 * (so every collector on a shared database, and every restart, agrees); from the moment the row
 * is committed every writer maintains the zone (ingest reads the table in its transaction), and
 * its history is derived in chunks of users ({@link prepareChunk}, each its own short
 * transaction under those users' locks) until the row is marked ready. A user's share is derived
 * again from their messages whatever ingest wrote for them before their chunk, so the order of
 * chunks and ingest does not matter.
 */

import type { RetentionZoneState } from './analytics-types'
import { lockUsers } from './analytics-writes'
import type { Dialect } from './dialect'
import type { Exec, Row } from './report-queries'
import {
  COHORTS,
  DAY_LINKS,
  LINKS_ZONE,
  PREV_DAYS,
  RETENTION_TABLES,
  RETENTION_ZONES_TABLE,
  USER_PERIODS,
  ZONE_LIST_LOCK,
} from './retention-cohorts'
import { deriveZone } from './retention-derive'
import type { Steps } from './rollup-writes'

/** Zones kept on demand when the collector's `retentionZonesOnDemand` is not set. */
export const DEFAULT_ZONES_ON_DEMAND = 8

/** The zones table's columns added for zones kept on demand (PostgreSQL migration 15, SQLite step 13). */
export const ZONE_DEMAND_COLUMNS: ReadonlyArray<[name: string, kind: 'text' | 'int', extra: string]> = [
  ['source', 'text', "NOT NULL DEFAULT 'option'"],
  ['ready', 'int', 'NOT NULL DEFAULT 1'],
  ['cursor_bot', 'text', ''],
  ['cursor_user', 'text', ''],
  ['users_done', 'int', 'NOT NULL DEFAULT 0'],
  ['users_total', 'int', 'NOT NULL DEFAULT 0'],
  ['requested_at', 'int', ''],
]

const T = { ...RETENTION_TABLES, zones: RETENTION_ZONES_TABLE }

const COLUMNS = 'zone, source, ready, users_done, users_total'

function stateOf(r: Row): RetentionZoneState {
  const ready = Number(r.ready) === 1
  const done = Number(r.users_done)
  const total = Math.max(1, Number(r.users_total))
  return {
    zone: String(r.zone),
    kept: r.source === 'option' ? 'option' : 'demand',
    ready,
    progress: ready ? 1 : Math.min(0.99, done / total),
  }
}

/** The zone's state as recorded, or null when it is not kept (a read: no transaction needed). */
export function* zoneState(d: Dialect, zone: string): Steps<RetentionZoneState | null> {
  const [row] = yield { sql: `SELECT ${COLUMNS} FROM ${d.table(T.zones)} WHERE zone = ?`, params: [zone] }
  return row ? stateOf(row) : null
}

/**
 * The zone's state; a zone that is not kept becomes kept on demand (its row committed with the
 * caller's transaction, its history not yet derived) unless `limit` zones already are.
 */
export function* requestZone(d: Dialect, zone: string, limit: number, now: number): Steps<RetentionZoneState> {
  const zones = d.table(T.zones)
  const read: { sql: string; params: unknown[] } = {
    sql: `SELECT ${COLUMNS} FROM ${zones} WHERE zone = ?`,
    params: [zone],
  }
  let [row] = yield read
  if (row) return stateOf(row)
  const none: RetentionZoneState = { zone, kept: null, ready: false, progress: 0 }
  if (limit <= 0) return none
  if (d.name === 'postgres') {
    yield { sql: 'SELECT count(pg_advisory_xact_lock(?::bigint)) AS n', params: [ZONE_LIST_LOCK] }
    // Another collector may have added it while this one waited.
    ;[row] = yield read
    if (row) return stateOf(row)
  }
  const [count] = yield { sql: `SELECT count(*) AS n FROM ${zones} WHERE source = 'demand'`, params: [] }
  if (Number(count?.n ?? 0) >= limit) return none
  yield {
    sql: `INSERT INTO ${zones} (zone, source, ready, users_done, users_total, requested_at)
      SELECT ?, 'demand', 0, 0, count(*), ? FROM ${d.table('user_profiles')}`,
    params: [zone, now],
  }
  return { zone, kept: 'demand', ready: false, progress: 0 }
}

/** The zones kept on demand whose history is not derived yet (a start resumes them). */
export function* pendingZones(d: Dialect): Steps<string[]> {
  const rows = yield { sql: `SELECT zone FROM ${d.table(T.zones)} WHERE ready = 0 ORDER BY zone`, params: [] }
  return rows.map((r) => String(r.zone))
}

/**
 * Derives the next chunk of at most `size` users (in key order after the zone's cursor) and moves
 * the cursor; the last chunk marks the zone ready. One transaction; on PostgreSQL one chunk of a
 * zone at a time across collectors (they take turns), under the chunk's users' locks.
 * Returns the zone's state, or null when its row is gone.
 */
export function* prepareChunk(d: Dialect, zone: string, size: number): Steps<RetentionZoneState | null> {
  const zones = d.table(T.zones)
  if (d.name === 'postgres')
    yield { sql: 'SELECT count(pg_advisory_xact_lock(hashtextextended(?, 29))) AS n', params: [zone] }
  const [row] = yield {
    sql: `SELECT ${COLUMNS}, cursor_bot, cursor_user FROM ${zones} WHERE zone = ?`,
    params: [zone],
  }
  if (!row) return null
  if (Number(row.ready) === 1) return stateOf(row)
  const after = row.cursor_bot === null || row.cursor_bot === undefined ? null : [row.cursor_bot, row.cursor_user]
  const users = (yield {
    sql: `SELECT bot, user_id FROM ${d.table('user_profiles')}${after ? ' WHERE (bot, user_id) > (?, ?)' : ''}
      ORDER BY bot, user_id LIMIT ${Math.max(1, Math.floor(size))}`,
    params: after ?? [],
  }).map((r) => ({ bot: String(r.bot), userId: String(r.user_id) }))
  yield* lockUsers(
    d,
    users.map((u) => `${u.bot}\u0000${u.userId}`),
  )
  yield* deriveZone(d, T, zone, users)
  const last = users[users.length - 1]
  const ready = users.length < size ? 1 : 0
  yield {
    sql: `UPDATE ${zones} SET cursor_bot = ?, cursor_user = ?, users_done = users_done + ?, ready = ?,
      users_total = CASE WHEN users_total < users_done + ? THEN users_done + ? ELSE users_total END WHERE zone = ?`,
    params: [
      last?.bot ?? row.cursor_bot ?? null,
      last?.userId ?? row.cursor_user ?? null,
      users.length,
      ready,
      users.length,
      users.length,
      zone,
    ],
  }
  const done = Number(row.users_done) + users.length
  return stateOf({ ...row, ready, users_done: done, users_total: Math.max(Number(row.users_total), done) })
}

/** The zones whose cohort table answers reads: the option's and the prepared ones kept on demand. */
export async function readyZones(d: Dialect, exec: Exec, option: readonly string[]): Promise<readonly string[]> {
  const rows = await exec({ sql: `SELECT zone FROM ${d.table(T.zones)} WHERE ready = 1`, params: [] })
  return [...new Set([...option, ...rows.map((r) => String(r.zone))])]
}

/** Whether the zones held for the option are exactly `wanted` (else a start syncs them). */
export function* optionZonesMatch(d: Dialect, wanted: readonly string[]): Steps<boolean> {
  const rows = yield {
    sql: `SELECT zone FROM ${d.table(T.zones)} WHERE source = 'option' ORDER BY zone`,
    params: [],
  }
  const held = rows.map((r) => String(r.zone)).sort()
  return held.length === wanted.length && held.every((z, i) => z === wanted[i])
}

/**
 * Makes the option's zones the ones held for it: a zone no longer named goes (its rows with it),
 * a zone already kept on demand becomes the option's (no derivation), a new one is derived from
 * every user's messages (callers hold the tables' locks: a start).
 */
export function* syncOptionZones(d: Dialect, wanted: readonly string[]): Steps {
  const zones = d.table(T.zones)
  const rows = yield { sql: `SELECT zone, source FROM ${zones}`, params: [] }
  const held = new Map(rows.map((r) => [String(r.zone), String(r.source)]))
  for (const [zone, source] of held) if (source === 'option' && !wanted.includes(zone)) yield* dropZone(d, zone)
  for (const zone of wanted) {
    const source = held.get(zone)
    if (source === 'demand') yield { sql: `UPDATE ${zones} SET source = 'option' WHERE zone = ?`, params: [zone] }
    else if (source === undefined) {
      yield* deriveZone(d, T, zone, 'all')
      yield { sql: `INSERT INTO ${zones} (zone) VALUES (?)`, params: [zone] }
    }
  }
}

/** Deletes a zone's summaries and its row. */
function* dropZone(d: Dialect, zone: string): Steps {
  for (const table of [USER_PERIODS.name, COHORTS.name, PREV_DAYS.name, RETENTION_ZONES_TABLE])
    yield { sql: `DELETE FROM ${d.table(table)} WHERE zone = ?`, params: [zone] }
  if (zone === LINKS_ZONE) yield { sql: `DELETE FROM ${d.table(DAY_LINKS.name)}`, params: [] }
}
