/**
 * Funnel step packs on PostgreSQL: each past UTC day of a step's hourly rows (funnel-packs.ts)
 * kept as one value per bot, so a funnel's count reads a few hundred values and the last days'
 * rows instead of a row per user and step (PostgreSQL reads ~5 M index rows a second on one core:
 * an all-time funnel over two steps of 400 000 users each took 0.5–0.65 s).
 *
 * - **Numbers**: a pack names users by number (`funnel_users`: bot and user id → number, from a
 *   sequence), given by the packer the first time it packs a row of theirs.
 * - **Which steps**: every step with rows (up to {@link MAX_AHEAD_STEPS}), by the collector's job 5
 *   minutes after it starts and every hour, and a funnel's own steps when it is counted.
 * - **Which hours**: an hour is packed once it ended 3 hours ago (the database's clock): days
 *   before that hour's day whole, that day up to the hour (`upto`, migration 25; packed again as
 *   the hour moves on), so a funnel reads the last 3–4 hours as rows, never a whole day of them.
 * - **Kept exact**: packed rows can still change (a record dated in the past, an erasure, the
 *   retention sweep). Each writer that changes a step row of an hour that ended an hour ago or more
 *   counts that hour's day's generation up (`funnel_day_gens`) in its transaction; a pack names the
 *   generation of the day it was read at (in the same statement as its rows), and is read only
 *   while that is still the day's generation — else the day's rows are read, and the day is packed
 *   again in the background. (A write at time W to an hour that a pack made at P ≥ W missed needs
 *   the hour to end by P − 3 h < W + (its transaction) − 3 h: before W − 1 h while a transaction
 *   lasts less than 2 h (statements are bounded to minutes), so it counts the day up.) A writer's
 *   clock behind the database's by more than 30 minutes could miss one: the database decides from
 *   its own clock. Live writes (to the last hour) count nothing up.
 * - Erasure: a user's number goes with their last step row.
 */
import type { ReadFilter } from '../store/store'
import { USER_STEPS } from './analytics-tables'
import type { FunnelLine, FunnelStep } from './analytics-types'
import { stepOf } from './analytics-writes'
import type { Dialect, Row } from './dialect'
import { encodeByBot, funnelFromPacks, type PackRow, type StepRows } from './funnel-packs'
import { scopeSql } from './message-queries'
import { DAY_MS, floorDay, floorHour, floorSql, HOUR_MS, hourRange } from './range'
import type { RollupMessage } from './rollup-delta'
import type { Steps } from './rollup-writes'

const USERS = 'funnel_users'
const USER_NUMS = 'funnel_user_nums'
const GENS = 'funnel_day_gens'
const PACK_DAYS = 'funnel_pack_days'
const PACKS = 'funnel_packs'

/** How long after its end a day is packed (the database's clock). */
const PACK_AFTER_MS = 3 * HOUR_MS
/**
 * A writer counts a day up when it ended this long ago or more: earlier than the packer by more
 * than any transaction lasts (statements are bounded to minutes; see the file's doc).
 */
const COUNT_UP_AFTER_MS = HOUR_MS
/** A writer's own clock may be this far behind the database's: it asks the database from then on. */
const CLOCK_SLACK_MS = 30 * 60_000
/**
 * A pack is made again this long after it was made, changed or not: whatever changed a day without
 * counting it up (a collector of an earlier version storing a record dated in it during an upgrade,
 * a hand-made change) is in the funnels again within this time.
 */
const PACK_MAX_AGE_MS = 7 * DAY_MS
/**
 * Days read as rows at most (the last days are never packed yet): a funnel with more days not
 * packed is counted by the statement (funnel-report.ts) while the packer catches up.
 */
export const MAX_LOOSE_DAYS = 5

const now = '(extract(epoch FROM clock_timestamp()) * 1000)::bigint'

/** The tables (PostgreSQL migration 23). */
export function funnelPacksDdl(d: Dialect): string {
  const users = d.table(USERS)
  const packs = d.table(PACKS)
  return `
CREATE SEQUENCE IF NOT EXISTS ${d.table(USER_NUMS)} AS integer MINVALUE 0 START 0;
CREATE TABLE IF NOT EXISTS ${users} (
  bot text COLLATE "C" NOT NULL,
  user_id text COLLATE "C" NOT NULL,
  num integer NOT NULL,
  PRIMARY KEY (bot, user_id)
);
CREATE TABLE IF NOT EXISTS ${d.table(GENS)} (day bigint PRIMARY KEY, gen bigint NOT NULL);
CREATE TABLE IF NOT EXISTS ${d.table(PACK_DAYS)} (
  kind text COLLATE "C" NOT NULL,
  name text COLLATE "C" NOT NULL,
  day bigint NOT NULL,
  gen bigint NOT NULL,
  made bigint NOT NULL,
  PRIMARY KEY (kind, name, day)
);
CREATE TABLE IF NOT EXISTS ${packs} (
  kind text COLLATE "C" NOT NULL,
  name text COLLATE "C" NOT NULL,
  day bigint NOT NULL,
  bot text COLLATE "C" NOT NULL,
  gen bigint NOT NULL,
  data bytea NOT NULL,
  PRIMARY KEY (kind, name, day, bot)
);
-- Varints and times do not compress: stored as they are, read without decompressing.
ALTER TABLE ${packs} ALTER COLUMN data SET STORAGE EXTERNAL;
`
}

/**
 * PostgreSQL migration 24: a pack's bytes kept as base64 text, not bytea. A bytea value is sent to
 * a client as hex text made by the server at every read (about 5 ms a MB of pack); a text value is
 * sent as it is stored and decoded by Node's native base64 (5.3 MB of packs: 13–26 against 30–38
 * ms from query to bytes, 10 M records).
 */
export function funnelPacksTextDdl(d: Dialect): string {
  const packs = d.table(PACKS)
  return `
ALTER TABLE ${packs} ALTER COLUMN data TYPE text USING translate(encode(data, 'base64'), E'\\n', '');
ALTER TABLE ${packs} ALTER COLUMN data SET STORAGE EXTERNAL;
`
}

/**
 * PostgreSQL migration 25: a day packed up to an hour (`upto`; null: the whole day) — the hours of
 * today (or, in the first hours of a day, of yesterday) that ended 3 hours ago, so a funnel reads
 * the last 3–4 hours as rows, not up to a day and 3 hours of them.
 */
export function funnelPackUptoDdl(d: Dialect): string {
  return `ALTER TABLE ${d.table(PACK_DAYS)} ADD COLUMN IF NOT EXISTS upto bigint;`
}

/** A pack as the database keeps it (base64 text, migration 24). */
const packText = (data: Uint8Array): string =>
  Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64')
/** A pack's bytes from the database's base64 text. */
const packBytes = (text: unknown): Uint8Array => Buffer.from(String(text), 'base64')

/**
 * In a writer's transaction that stored or took back `messages` (PostgreSQL): the days of step
 * rows in hours that ended an hour ago or more are counted up (in day order, the same lock order
 * for every writer); after a take-back (`erased`), the numbers of its users left without a step row go.
 */
export function* touchPackedDays(
  d: Dialect,
  messages: readonly RollupMessage[],
  erased: boolean,
  clock = Date.now(),
): Steps {
  if (d.name !== 'postgres') return
  const hours = new Set<number>()
  // Only hours the database may count up are sent (a clock behind the database's by less than the slack).
  for (const m of messages)
    if (m.userId !== '' && floorHour(m.ts) + HOUR_MS < clock - COUNT_UP_AFTER_MS + CLOCK_SLACK_MS && stepOf(m) !== null)
      hours.add(floorHour(m.ts))
  if (hours.size > 0) {
    const gens = d.table(GENS)
    yield {
      sql: `INSERT INTO ${gens} (day, gen)
        SELECT DISTINCT ${floorSql('h', DAY_MS)}, 1 FROM unnest(?::bigint[]) AS h
        WHERE h + ${HOUR_MS} <= ${now} - ${COUNT_UP_AFTER_MS}
        ORDER BY 1
        ON CONFLICT (day) DO UPDATE SET gen = ${gens}.gen + 1`,
      params: [[...hours].sort((a, b) => a - b)],
    }
  }
  if (!erased) return
  const users = new Map<string, RollupMessage>()
  for (const m of messages) if (m.userId !== '' && stepOf(m) !== null) users.set(`${m.bot}\u0000${m.userId}`, m)
  if (users.size === 0) return
  const bots = [...users.values()].map((m) => m.bot)
  const ids = [...users.values()].map((m) => m.userId)
  yield {
    sql: `DELETE FROM ${d.table(USERS)} u USING unnest(?::text[], ?::text[]) AS x(bot, user_id)
      WHERE u.bot = x.bot AND u.user_id = x.user_id
        AND NOT EXISTS (SELECT 1 FROM ${d.table(USER_STEPS.name)} s WHERE s.bot = x.bot AND s.user_id = x.user_id)`,
    params: [bots, ids],
  }
}

/**
 * The database's clock (or `clock`, a test's), the day before which days may be packed, and the
 * step's first day (null: no rows).
 */
function* packBounds(
  d: Dialect,
  step: FunnelStep,
): Steps<{ now: number; end: number; upto: number; first: number | null }> {
  const [row] = yield {
    sql: `SELECT ${now} AS now, (SELECT min(hour) FROM ${d.table(USER_STEPS.name)} WHERE kind = ? AND name = ?) AS first`,
    params: [step.kind, step.name],
  }
  const first = row?.first === null || row?.first === undefined ? null : floorDay(Number(row.first))
  const at = Number(row?.now)
  // Whole days before `end`; the day `end` itself up to the hour `upto`.
  const upto = floorHour(at - PACK_AFTER_MS)
  return { now: at, end: floorDay(upto), upto, first }
}

/**
 * The step's days in `[from, to)` whose packs are current and were made since `madeSince`, each
 * with the hour it is packed up to (null: the whole day) — the days, not their packs: the packer
 * only needs to know which to leave.
 */
function* currentDays(
  d: Dialect,
  step: FunnelStep,
  from: number,
  to: number,
  madeSince: number,
): Steps<Map<number, number | null>> {
  const rows = yield {
    sql: `SELECT m.day, m.upto FROM ${d.table(PACK_DAYS)} m
      LEFT JOIN ${d.table(GENS)} g ON g.day = m.day
      WHERE m.kind = ? AND m.name = ? AND m.day >= ? AND m.day < ? AND m.gen = coalesce(g.gen, 0) AND m.made >= ?`,
    params: [step.kind, step.name, from, to, madeSince],
  }
  return new Map(rows.map((r) => [Number(r.day), r.upto === null || r.upto === undefined ? null : Number(r.upto)]))
}

/** Steps packed ahead at most: every step with rows up to this many (see {@link stepsToPack}). */
export const MAX_AHEAD_STEPS = 200

/**
 * The steps to pack (the collector's job, a few minutes after it starts and every hour): every
 * step with rows — up to `max` of them, in kind and name order, one index probe each (not a row
 * per user) — and every step packed before, so that a funnel over any steps is read from packs
 * from its first count. A funnel's own steps are packed when it is counted, whatever their number.
 */
export function* stepsToPack(d: Dialect, max = MAX_AHEAD_STEPS): Steps<FunnelStep[]> {
  const hours = d.table(USER_STEPS.name)
  const rows = yield {
    sql: `WITH RECURSIVE s(kind, name) AS (
        (SELECT kind, name FROM ${hours} ORDER BY kind, name LIMIT 1)
        UNION ALL
        SELECT x.kind, x.name FROM s, LATERAL (
          SELECT t.kind, t.name FROM ${hours} t WHERE (t.kind, t.name) > (s.kind, s.name) ORDER BY t.kind, t.name LIMIT 1
        ) x
      )
      (SELECT kind, name FROM s LIMIT ?) UNION SELECT DISTINCT kind, name FROM ${d.table(PACK_DAYS)}
      ORDER BY kind, name`,
    params: [max],
  }
  return rows.map((r) => ({ kind: r.kind as FunnelStep['kind'], name: String(r.name) }))
}

/**
 * Packs the steps' hours that ended 3 hours ago or more and have no current pack: days before
 * that hour's day whole, that day up to the hour (one transaction; packers of several collectors
 * take turns). Returns the days packed.
 */
export function* packSteps(d: Dialect, steps: readonly FunnelStep[]): Steps<number> {
  // Another collector packing now: it packs these days too (or the next run does).
  const [lock] = yield {
    sql: `SELECT pg_try_advisory_xact_lock(hashtext('convotrack funnel packs')) AS got`,
    params: [],
  }
  if (lock?.got !== true) return 0
  const hours = d.table(USER_STEPS.name)
  const users = d.table(USERS)
  let packed = 0
  const seen = new Set<string>()
  for (const step of steps) {
    const key = `${step.kind}:${step.name}`
    if (seen.has(key)) continue
    seen.add(key)
    const { now: made, end, upto, first } = yield* packBounds(d, step)
    // Days before the step's first row (their rows gone since: an erasure, the retention sweep):
    // no pack of them is kept.
    for (const table of [PACKS, PACK_DAYS])
      yield {
        sql: `DELETE FROM ${d.table(table)} WHERE kind = ? AND name = ?${first === null ? '' : ' AND day < ?'}`,
        params: first === null ? [step.kind, step.name] : [step.kind, step.name, first],
      }
    if (first === null || first >= upto) continue
    const current = yield* currentDays(d, step, first, end + DAY_MS, made - PACK_MAX_AGE_MS)
    // The days with rows, one index probe each (not every row of the step).
    const withRows = yield {
      sql: `WITH RECURSIVE days(day) AS (
          SELECT (SELECT min(hour) - min(hour) % ${DAY_MS} FROM ${hours} WHERE kind = ? AND name = ? AND hour >= ? AND hour < ?)
          UNION ALL
          SELECT (SELECT min(hour) - min(hour) % ${DAY_MS} FROM ${hours}
            WHERE kind = ? AND name = ? AND hour >= days.day + ${DAY_MS} AND hour < ?)
          FROM days WHERE days.day IS NOT NULL
        ) SELECT day FROM days WHERE day IS NOT NULL`,
      params: [step.kind, step.name, first, upto, step.kind, step.name, upto],
    }
    for (const dayRow of withRows) {
      const day = Number(dayRow.day)
      // The day `end`: its hours before `upto` (packed again when `upto` moved on); the others whole.
      const partial = day === end
      if (current.get(day) === (partial ? upto : null)) continue
      const range = [step.kind, step.name, day, partial ? upto : day + DAY_MS]
      // Numbers for the day's users who have none.
      yield {
        sql: `INSERT INTO ${users} (bot, user_id, num)
          SELECT s.bot, s.user_id, nextval('${d.table(USER_NUMS)}') FROM (
            SELECT DISTINCT bot, user_id FROM ${hours} WHERE kind = ? AND name = ? AND hour >= ? AND hour < ?
          ) s WHERE NOT EXISTS (SELECT 1 FROM ${users} u WHERE u.bot = s.bot AND u.user_id = s.user_id)`,
        params: range,
      }
      // The day's rows and its generation, read in one statement (one snapshot).
      const rows = yield {
        sql: `SELECT g.gen, s.bot, s.num, s.first_ts, s.last_ts
          FROM (SELECT coalesce(max(gen), 0) AS gen FROM ${d.table(GENS)} WHERE day = ?) g
          LEFT JOIN (SELECT h.bot, h.first_ts, h.last_ts,
              (SELECT u.num FROM ${users} u WHERE u.bot = h.bot AND u.user_id = h.user_id) AS num
            FROM ${hours} h WHERE h.kind = ? AND h.name = ? AND h.hour >= ? AND h.hour < ?) s ON true`,
        params: [day, ...range],
      }
      const gen = Number(rows[0]?.gen ?? 0)
      // A row of a user numbered after the statement before (a record dated in this day, stored
      // meanwhile: the day's generation read with it counts it): the day waits for the next run.
      if (rows.some((r) => r.bot !== null && r.bot !== undefined && (r.num === null || r.num === undefined))) continue
      const packs = encodeByBot(
        day,
        rows
          .filter((r) => r.bot !== null && r.bot !== undefined)
          .map((r) => ({
            bot: String(r.bot),
            user: Number(r.num),
            first: Number(r.first_ts),
            last: Number(r.last_ts),
          })),
      )
      yield {
        sql: `DELETE FROM ${d.table(PACKS)} WHERE kind = ? AND name = ? AND day = ?`,
        params: [step.kind, step.name, day],
      }
      const bots = [...packs.keys()]
      if (bots.length > 0)
        yield {
          sql: `INSERT INTO ${d.table(PACKS)} (kind, name, day, bot, gen, data)
            SELECT ?, ?, ?, bot, ?, data FROM unnest(?::text[], ?::text[]) AS x(bot, data)`,
          params: [step.kind, step.name, day, gen, bots, bots.map((b) => packText(packs.get(b) as Buffer))],
        }
      yield {
        sql: `INSERT INTO ${d.table(PACK_DAYS)} (kind, name, day, gen, made, upto) VALUES (?, ?, ?, ?, ?, ?)
          ON CONFLICT (kind, name, day) DO UPDATE SET gen = excluded.gen, made = excluded.made, upto = excluded.upto`,
        params: [step.kind, step.name, day, gen, made, partial ? upto : null],
      }
      packed++
    }
    // The days without rows: marked packed (empty) in one statement that reads their generation.
    const marked = yield {
      sql: `INSERT INTO ${d.table(PACK_DAYS)} (kind, name, day, gen, made)
        SELECT ?, ?, g.day, coalesce(x.gen, 0), ? FROM generate_series(?::bigint, ?::bigint, ${DAY_MS}) AS g(day)
        LEFT JOIN ${d.table(GENS)} x ON x.day = g.day
        WHERE NOT EXISTS (SELECT 1 FROM ${d.table(PACK_DAYS)} m
            WHERE m.kind = ? AND m.name = ? AND m.day = g.day AND m.gen = coalesce(x.gen, 0) AND m.made >= ?
              AND m.upto IS NULL)
          AND NOT EXISTS (SELECT 1 FROM ${hours} s
            WHERE s.kind = ? AND s.name = ? AND s.hour >= g.day AND s.hour < g.day + ${DAY_MS})
        ON CONFLICT (kind, name, day) DO UPDATE SET gen = excluded.gen, made = excluded.made, upto = NULL
        RETURNING day`,
      params: [
        step.kind,
        step.name,
        made,
        first,
        end - DAY_MS,
        step.kind,
        step.name,
        made - PACK_MAX_AGE_MS,
        step.kind,
        step.name,
      ],
    }
    packed += marked.length
    // Their packs from before (rows gone since, whether or not the day was counted up): gone.
    if (marked.length > 0)
      yield {
        sql: `DELETE FROM ${d.table(PACKS)} WHERE kind = ? AND name = ? AND day = ANY(?::bigint[])`,
        params: [step.kind, step.name, marked.map((r) => Number(r.day))],
      }
    // Packs no longer current (their day counted up since, or emptied): gone.
    yield {
      sql: `DELETE FROM ${d.table(PACKS)} p WHERE p.kind = ? AND p.name = ? AND NOT EXISTS (
          SELECT 1 FROM ${d.table(PACK_DAYS)} m WHERE m.kind = p.kind AND m.name = p.name AND m.day = p.day AND m.gen = p.gen)`,
      params: [step.kind, step.name],
    }
  }
  return packed
}

/** What {@link packedFunnel} found: the counts, or null (too many days not packed); days to pack. */
export interface PackedFunnel {
  lines: FunnelLine[] | null
  /** Days of the steps that could be packed and are not. */
  unpacked: number
}

/**
 * The funnel (funnel-report.ts's meaning) from the steps' current packs and the rows of the days
 * without one, or `lines: null` when more than {@link MAX_LOOSE_DAYS} days of a step are not packed.
 * Three statements whatever the number of steps: the clock and each step's first day; every
 * step's current packs; the other days' rows of every step, with the sequence's value.
 */
export function* packedFunnel(
  d: Dialect,
  filter: ReadFilter & { steps: readonly FunnelStep[] },
  clock?: number,
): Steps<PackedFunnel> {
  const r = hourRange(filter)
  const steps = filter.steps
  if (steps.length === 0) return { lines: [], unpacked: 0 }
  const hours = d.table(USER_STEPS.name)
  const zero = (): PackedFunnel => ({
    lines: steps.map((s) => ({ step: `${s.kind}:${s.name}`, users: 0 })),
    unpacked: 0,
  })
  const [head] = yield {
    sql: `SELECT ${now} AS now, ${steps
      .map(
        (_, k) =>
          `(SELECT min(hour) FROM ${hours} WHERE kind = ? AND name = ?) AS f${k}, (SELECT max(hour) FROM ${hours} WHERE kind = ? AND name = ?) AS l${k}`,
      )
      .join(', ')}`,
    params: steps.flatMap((s) => [s.kind, s.name, s.kind, s.name]),
  }
  const at = clock ?? Number(head?.now)
  // Days before `end` are packed whole, the day `end` up to the hour `upto`.
  const upto = floorHour(at - PACK_AFTER_MS)
  const end = floorDay(upto)
  // Each step's first and last day (none: a step without rows).
  const dayIn = (v: unknown): number | null => (v === null || v === undefined ? null : floorDay(Number(v)))
  const firsts = steps.map((_, k) => dayIn(head?.[`f${k}`]))
  const lasts = steps.map((_, k) => dayIn(head?.[`l${k}`]))
  if (firsts[0] === null || firsts[0] === undefined) return zero()
  // No step can count before its own first row, nor any after the first before the first step's.
  const from = Math.max(floorDay(r.from), firsts[0])
  // The days the range overlaps (to today's end when it has no end), of each step from its first
  // day to its last (a range ending in the future reads no day after a step's last row).
  const to = floorDay(r.to === null ? at : r.to - 1) + DAY_MS
  const starts = firsts.map((f) => (f === null ? to : Math.max(from, f)))
  const ends = lasts.map((l) => (l === null ? to : Math.min(to, l + DAY_MS)))
  // Every step's current packs (its day's generation, whatever their age), of the scope's bots.
  const params: unknown[] = []
  const values = steps
    .map((s, k) => {
      params.push(k, s.kind, s.name, starts[k], ends[k])
      return '(?::int, ?::text, ?::text, ?::bigint, ?::bigint)'
    })
    .join(', ')
  const scope = scopeSql(d, filter, params, 'p.bot')
  const packRows = yield {
    sql: `SELECT s.k, m.day, m.upto, p.data FROM (VALUES ${values}) AS s(k, kind, name, start, stop)
      JOIN ${d.table(PACK_DAYS)} m ON m.kind = s.kind COLLATE "C" AND m.name = s.name COLLATE "C"
        AND m.day >= s.start AND m.day < s.stop
      LEFT JOIN ${d.table(GENS)} g ON g.day = m.day
      LEFT JOIN ${d.table(PACKS)} p ON p.kind = m.kind AND p.name = m.name AND p.day = m.day AND p.gen = m.gen${scope}
      WHERE m.gen = coalesce(g.gen, 0)`,
    params,
  }
  // Per step and day: its packs, and the hour they end at (null: the whole day).
  const current = steps.map(() => new Map<number, { packs: Uint8Array[]; upto: number | null }>())
  for (const row of packRows) {
    const days = current[Number(row.k)] as Map<number, { packs: Uint8Array[]; upto: number | null }>
    const day = Number(row.day)
    const kept = days.get(day) ?? {
      packs: [],
      upto: row.upto === null || row.upto === undefined ? null : Number(row.upto),
    }
    if (row.data !== null && row.data !== undefined) kept.packs.push(packBytes(row.data))
    days.set(day, kept)
  }
  const sources: StepRows[] = []
  const loose: Array<{ step: number; from: number; to: number }> = []
  let unpacked = 0
  let tooMany = false
  for (const [k, start] of starts.entries()) {
    const packs: StepRows['packs'][number][] = []
    let days = 0
    for (let day = start; day < (ends[k] as number); day += DAY_MS) {
      const kept = current[k]?.get(day)
      // The rows after the packs' hour (none for a whole day), or the whole day without a pack.
      let rowsFrom = day
      if (kept !== undefined) {
        for (const p of kept.packs) packs.push({ day, data: p })
        if (kept.upto === null) continue
        rowsFrom = kept.upto
        // A day packed up to an hour before it could be: packed again in the background.
        if (day < end || kept.upto < upto) unpacked++
      } else {
        days++
        if (day < end || (day === end && upto > day)) unpacked++
      }
      const last = loose.at(-1)
      if (last && last.step === k && last.to === rowsFrom) last.to = day + DAY_MS
      else loose.push({ step: k, from: rowsFrom, to: day + DAY_MS })
    }
    if (days > MAX_LOOSE_DAYS) tooMany = true
    sources.push({ packs, rows: [] })
  }
  if (tooMany) return { lines: null, unpacked }
  // The days without a pack: their rows, each with its number by the key (a probe per row: never
  // every user's number read to join them), after a first row with the sequence's value — every
  // number given so far (by packers, while this read ran too) is below it. A user the packer has
  // not numbered yet gets a number after it, for this count only.
  const looseParams: unknown[] = []
  const selects = loose.map((span) => {
    const step = steps[span.step] as FunnelStep
    looseParams.push(span.step)
    const scoped = scopeSql(d, filter, looseParams, 's.bot')
    looseParams.push(
      step.kind,
      step.name,
      Math.max(span.from, r.from),
      r.to === null ? span.to : Math.min(span.to, r.to),
    )
    return `SELECT ?::int AS k, (SELECT u.num FROM ${d.table(USERS)} u WHERE u.bot = s.bot AND u.user_id = s.user_id) AS num,
        s.bot, s.user_id, s.first_ts, s.last_ts
      FROM ${hours} s WHERE true${scoped} AND s.kind = ? AND s.name = ? AND s.hour >= ? AND s.hour < ?`
  })
  const rows: Row[] = yield {
    sql: [
      `SELECT -1 AS k, (SELECT CASE WHEN is_called THEN last_value + 1 ELSE 0 END FROM ${d.table(USER_NUMS)}) AS num,
        NULL AS bot, NULL AS user_id, NULL::bigint AS first_ts, NULL::bigint AS last_ts`,
      ...selects,
    ].join('\nUNION ALL\n'),
    params: looseParams,
  }
  let users = 0
  const extra = new Map<string, number>()
  const unnumbered: PackRow[] = []
  for (const row of rows) {
    const k = Number(row.k)
    if (k < 0) {
      users = Number(row.num)
      continue
    }
    const line = { user: 0, first: Number(row.first_ts), last: Number(row.last_ts) }
    if (row.num !== null && row.num !== undefined) line.user = Number(row.num)
    else {
      const key = `${row.bot}\u0000${row.user_id}`
      const i = extra.get(key) ?? extra.size
      extra.set(key, i)
      line.user = i
      unnumbered.push(line)
    }
    ;((sources[k] as StepRows).rows as PackRow[]).push(line)
  }
  for (const line of unnumbered) line.user += users
  const counts = funnelFromPacks(sources, users + extra.size, r.from, r.to)
  return { lines: steps.map((s, i) => ({ step: `${s.kind}:${s.name}`, users: counts[i] ?? 0 })), unpacked }
}
