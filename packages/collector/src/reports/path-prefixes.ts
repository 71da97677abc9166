/**
 * The paths report's summary: sessions per bot × start hour × path prefix (the first 1 … n
 * incoming intents of a session, n ≤ PATH_DEPTH_MAX). Kept from the sessions' replacements in
 * analytics-writes.ts (a session that grows or joins takes its old prefixes back and adds its
 * new ones), so it is a plain sum like the other summaries.
 */
import { PATH_DEPTH_MAX } from './analytics-tables'
import type { Dialect } from './dialect'
import { floorHour } from './range'
import type { Exec } from './report-queries'
import { addRow, type Deltas } from './rollup-delta'
import { dropEmptyQueries, type RollupSpec, upsertQueries } from './rollup-tables'
import type { Steps } from './rollup-writes'
import type { Session } from './sessions'

/**
 * `sessions`: sessions whose first `depth` intents are `path` (a JSON array); `ends`: those of
 * them with no further intent, so a shorter path counts at any greater depth.
 */
export const PATH_PREFIXES: RollupSpec = {
  name: 'rollup_path_prefixes',
  columns: { bot: 'text', hour: 'int', depth: 'int', path: 'text', sessions: 'int', ends: 'int' },
  keys: ['bot', 'hour', 'depth', 'path'],
  sums: ['sessions', 'ends'],
  live: ['sessions'],
  indexes: [['depth', 'hour']],
}

/** Adds (sign 1) or takes back (−1) one session's prefixes. */
export function countPaths(deltas: Deltas, s: Pick<Session, 'bot' | 'start' | 'intents'>, sign: 1 | -1): void {
  const names = s.intents.slice(0, PATH_DEPTH_MAX).map((x) => x[1])
  for (let depth = 1; depth <= names.length; depth++)
    addRow(deltas, PATH_PREFIXES, {
      bot: s.bot,
      hour: floorHour(s.start),
      depth,
      path: JSON.stringify(names.slice(0, depth)),
      sessions: sign,
      ends: depth === names.length ? sign : 0,
    })
}

/**
 * The paths of `depth` of sessions that started in the hours [from, to) (`scope`: the bots),
 * with how many sessions took each: grows with hours × distinct paths, never with sessions.
 */
export async function pathCounts(
  d: Dialect,
  exec: Exec,
  q: { depth: number; range: (params: unknown[]) => string; scope: (params: unknown[]) => string },
): Promise<Array<{ path: string[]; sessions: number }>> {
  const params: unknown[] = [q.depth, q.depth]
  const where = `depth <= ?${q.range(params)}${q.scope(params)}`
  const rows = await exec({
    sql: `SELECT path, sum(CASE WHEN depth = ? THEN sessions ELSE ends END) AS n
      FROM ${d.table(PATH_PREFIXES.name)} WHERE ${where} GROUP BY path`,
    params,
  })
  return rows
    .map((r) => ({ path: JSON.parse(String(r.path)) as string[], sessions: Number(r.n) }))
    .filter((r) => r.sessions > 0)
}

/** Sessions read per step of a rebuild. */
const REBUILD_PAGE = 5_000

/** Derives the prefixes from the stored sessions (the migration that adds them). */
export function* rebuildPaths(d: Dialect): Steps {
  const t = d.table('sessions')
  yield { sql: `DELETE FROM ${d.table(PATH_PREFIXES.name)}`, params: [] }
  let after: unknown[] | null = null
  for (;;) {
    const page: Array<Record<string, unknown>> = yield {
      sql: `SELECT bot, user_id, sid, start_ts, intents FROM ${t}
        ${after ? 'WHERE (bot, user_id, sid, start_ts) > (?, ?, ?, ?)' : ''}
        ORDER BY bot, user_id, sid, start_ts LIMIT ${REBUILD_PAGE}`,
      params: after ?? [],
    }
    if (page.length === 0) break
    const lastRow = page[page.length - 1] as Record<string, unknown>
    after = [lastRow.bot, lastRow.user_id, lastRow.sid, lastRow.start_ts]
    const deltas: Deltas = new Map()
    for (const r of page) {
      let intents: Array<[number, string]> = []
      try {
        intents = JSON.parse(String(r.intents ?? '[]'))
      } catch {
        intents = []
      }
      countPaths(deltas, { bot: String(r.bot), start: Number(r.start_ts), intents }, 1)
    }
    yield* flushPaths(d, deltas)
  }
}

/** Upserts the prefix changes, dropping prefixes no session has any more. */
export function* flushPaths(d: Dialect, deltas: Deltas): Steps {
  const list = [...(deltas.get(PATH_PREFIXES)?.values() ?? [])].filter((r) => r.sessions !== 0 || r.ends !== 0)
  yield* upsertQueries(d, PATH_PREFIXES, list)
  yield* dropEmptyQueries(d, PATH_PREFIXES, list)
}
