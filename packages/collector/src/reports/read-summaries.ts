/**
 * The summaries that keep the NotHandled report and the audience segments small at any history
 * size, written once for both databases (statement generators, as in rollup-writes.ts):
 *
 * - `rollup_nh_phrases` — NotHandled inputs per bot × hour × phrase: count, latest time, a
 *   spelling, and `users`: the users whose LATEST input of that phrase falls in that hour. Users
 *   who said a phrase in `[from, now)` are exactly those whose latest input of it is at or after
 *   `from`, so an open-ended range (the default, the dashboard's presets, all time) reads one row
 *   per phrase × hour. `nh_phrase_users` (bot × user × phrase: latest time, count) is what says
 *   where each user's latest input is.
 * - `rollup_user_seen` — per bot × hour: users first seen (`firsts`) and last seen (`lasts`) in
 *   that hour, every user. Users with a message in `[from, now)` are `Σ lasts (hour ≥ from)`, new
 *   users of `[from, to)` are `Σ firsts` over it: the overview counts hours, not profiles.
 * - `rollup_segments` — per bot × hour × field × value of the users' latest metadata: `firsts`
 *   (users first seen in that hour) and `lasts` (users last seen in it). The users whose first-to-
 *   last-seen span meets `[from, to)` (the segments report's rule) are `Σ lasts (hour ≥ from) −
 *   Σ firsts (hour ≥ to)`: rows from `from` on, not one per user. `user_segments` holds what each
 *   user is counted as in both (first and last hour, field/value pairs: `[]` for a user without
 *   metadata), so a change moves their counts.
 *
 * Every change that is not a pure sum is a read-modify-write of one user's rows: on PostgreSQL the
 * user is locked first (the same transaction-level lock the sessions take), so two collectors
 * writing the same user at once take turns.
 */
import { lockUsers } from './analytics-writes'
import type { ColumnKind, Dialect, Query } from './dialect'
import { floorHour, HOUR_MS } from './range'
import { NH_PHRASES, NH_USERS, READ_SUMMARIES, SEGMENTS, USER_SEEN, USER_SEGMENTS } from './read-summary-tables'
import type { Row } from './report-queries'
import { addRow, type Deltas, type Late, phraseOf, type RollupMessage } from './rollup-delta'
import {
  deleteKeysQueries,
  dropEmptyQueries,
  NOT_HANDLED,
  type RollupRow,
  type RollupSpec,
  USERS,
  upsertQueries,
} from './rollup-tables'
import type { Steps } from './rollup-writes'
import { segmentPairs } from './segment-pairs'

const sep = '\u0000'
const userKey = (bot: string, user: string) => `${bot}${sep}${user}`

/** Rows of `spec` whose keys match `keys` (each a row of key columns). */
function* selectKeys(
  d: Dialect,
  spec: RollupSpec,
  cols: string,
  keys: readonly RollupRow[],
  by: readonly string[],
): Steps<Row[]> {
  if (keys.length === 0) return []
  const t = d.table(spec.name)
  if (d.multiRow) {
    const list = by.map((k) => `?::${d.arrayType(spec.columns[k] as ColumnKind)}`).join(', ')
    return yield {
      sql: `SELECT ${cols} FROM ${t} JOIN unnest(${list}) AS k (${by.join(', ')}) USING (${by.join(', ')})`,
      params: by.map((c) => keys.map((k) => k[c] ?? null)),
    }
  }
  const out: Row[] = []
  const sql = `SELECT ${cols} FROM ${t} WHERE ${by.map((k) => `${k} = ?`).join(' AND ')}`
  for (const k of keys) out.push(...(yield { sql, params: by.map((c) => k[c] ?? null) }))
  return out
}

/** Replaces whole rows (the value written is the truth under the user's lock): upsert assigning every column. */
function replaceQueries(d: Dialect, spec: RollupSpec, rows: readonly RollupRow[]): Query[] {
  if (rows.length === 0) return []
  const t = d.table(spec.name)
  const cols = Object.keys(spec.columns)
  const set = cols.filter((c) => !spec.keys.includes(c)).map((c) => `${c} = excluded.${c}`)
  const conflict = `ON CONFLICT (${spec.keys.join(', ')}) DO UPDATE SET ${set.join(', ')}`
  const sorted = [...rows].sort((a, b) => (keyString(spec, a) < keyString(spec, b) ? -1 : 1))
  if (d.multiRow)
    return [
      {
        sql: `INSERT INTO ${t} (${cols.join(', ')}) SELECT * FROM unnest(${cols
          .map((c) => `?::${d.arrayType(spec.columns[c] as ColumnKind)}`)
          .join(', ')}) ${conflict}`,
        params: cols.map((c) => sorted.map((r) => r[c] ?? null)),
      },
    ]
  const sql = `INSERT INTO ${t} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')}) ${conflict}`
  return sorted.map((r) => ({ sql, params: cols.map((c) => r[c] ?? null) }))
}

const keyString = (spec: RollupSpec, row: RollupRow) => spec.keys.map((k) => String(row[k])).join(sep)

/**
 * Merges summed changes, then deletes the rows they emptied — or, for a table the writer keeps
 * for the end of its transaction (summary-writes.ts: rows every batch touches), hands them over.
 */
function* applySums(d: Dialect, spec: RollupSpec, rows: readonly RollupRow[], late?: Late): Steps {
  if (late?.takes(spec)) {
    for (const r of rows) addRow(late.deltas, spec, r)
    return
  }
  for (const q of upsertQueries(d, spec, rows)) yield q
  for (const q of dropEmptyQueries(
    d,
    spec,
    rows.filter((r) => (spec.sums ?? []).some((c) => Number(r[c]) < 0)),
  ))
    yield q
}

// ------------------------------------------------------------------ NotHandled: users per phrase

/** A user's latest input of one phrase (and how many), as it is (`truth`) or as it was counted (`had`). */
type Latest = { bot: string; user_id: string; phrase: string; last_ts: number; n: number }

/**
 * Moves each changed user's `users` count to the hour of their latest input of the phrase, and
 * stores the new latest inputs. `had`: what `nh_phrase_users` held; `truth`: what it must hold
 * for these users (an absent key: the user no longer has an input of that phrase).
 */
function* moveUsers(d: Dialect, had: readonly Latest[], truth: readonly Latest[], phrases: Deltas): Steps {
  const before = new Map(had.map((r) => [keyString(NH_USERS, r), r]))
  const after = new Map(truth.map((r) => [keyString(NH_USERS, r), r]))
  const gone: RollupRow[] = []
  const move = (r: Latest, users: number) =>
    addRow(phrases, NH_PHRASES, {
      bot: r.bot,
      hour: floorHour(r.last_ts),
      phrase: r.phrase,
      n: 0,
      users,
      last_ts: null,
      text: null,
    })
  for (const [k, r] of before) {
    const now = after.get(k)
    if (now && floorHour(now.last_ts) === floorHour(r.last_ts)) continue
    move(r, -1)
    if (!now) gone.push({ bot: r.bot, user_id: r.user_id, phrase: r.phrase })
  }
  for (const [k, r] of after) {
    const was = before.get(k)
    if (!was || floorHour(was.last_ts) !== floorHour(r.last_ts)) move(r, 1)
  }
  for (const q of replaceQueries(
    d,
    NH_USERS,
    truth.filter((r) => {
      const was = before.get(keyString(NH_USERS, r))
      return !was || was.last_ts !== r.last_ts || was.n !== r.n
    }),
  ))
    yield q
  for (const q of deleteKeysQueries(d, NH_USERS, gone)) yield q
}

const latestOf = (r: Row): Latest => ({
  bot: String(r.bot),
  user_id: String(r.user_id),
  phrase: String(r.phrase),
  last_ts: Number(r.last_ts),
  n: Number(r.n),
})

/** At ingest: the batch's NotHandled rows (bot × hour × phrase × user, from the rollups' changes) into the phrase summaries. */
function* ingestPhrases(d: Dialect, deltas: Deltas, late?: Late): Steps {
  const inputs = [...(deltas.get(NOT_HANDLED)?.values() ?? [])]
  if (inputs.length === 0) return
  const phrases: Deltas = new Map()
  const batch = new Map<string, Latest>()
  for (const r of inputs) {
    addRow(phrases, NH_PHRASES, {
      bot: r.bot ?? null,
      hour: r.hour ?? null,
      phrase: r.phrase ?? null,
      n: r.n ?? 0,
      users: 0,
      last_ts: r.last_ts ?? null,
      text: r.text ?? null,
    })
    const l: Latest = {
      bot: String(r.bot),
      user_id: String(r.user_id),
      phrase: String(r.phrase),
      last_ts: Number(r.last_ts),
      n: Number(r.n),
    }
    const k = keyString(NH_USERS, l)
    const had = batch.get(k)
    batch.set(k, had ? { ...l, last_ts: Math.max(had.last_ts, l.last_ts), n: had.n + l.n } : l)
  }
  const had = (yield* selectKeys(
    d,
    NH_USERS,
    'bot, user_id, phrase, last_ts, n',
    [...batch.values()],
    NH_USERS.keys,
  )).map(latestOf)
  const stored = new Map(had.map((r) => [keyString(NH_USERS, r), r]))
  const truth = [...batch.entries()].map(([k, l]) => {
    const s = stored.get(k)
    return s ? { ...l, last_ts: Math.max(s.last_ts, l.last_ts), n: s.n + l.n } : l
  })
  yield* moveUsers(d, had, truth, phrases)
  yield* applySums(d, NH_PHRASES, [...(phrases.get(NH_PHRASES)?.values() ?? [])], late)
}

/**
 * After erasure or retention (the rollups' NotHandled rows already derived again): the phrase rows
 * of the deleted inputs' hours lose them (count; latest time and spelling derived again), and each
 * touched user's latest inputs are derived again from their remaining messages.
 */
function* takeBackPhrases(d: Dialect, doomed: readonly RollupMessage[], late?: Late): Steps {
  const inputs = doomed.filter((m) => m.nh)
  if (inputs.length === 0) return
  const phrases: Deltas = new Map()
  for (const m of inputs)
    addRow(phrases, NH_PHRASES, {
      bot: m.bot,
      hour: floorHour(m.ts),
      phrase: phraseOf(m.text),
      n: -1,
      users: 0,
      last_ts: null,
      text: null,
    })
  const users = [...new Map(inputs.map((m) => [userKey(m.bot, m.userId), { bot: m.bot, user_id: m.userId }])).values()]
  const had = (yield* selectKeys(d, NH_USERS, 'bot, user_id, phrase, last_ts, n', users, ['bot', 'user_id'])).map(
    latestOf,
  )
  const truth: Latest[] = []
  for (const u of users) {
    const left = new Map<string, Latest>()
    for (const r of yield {
      sql: `SELECT text, ts FROM ${d.table('messages')} WHERE bot = ? AND user_id = ? AND nh = 1`,
      params: [u.bot, u.user_id],
    }) {
      const phrase = phraseOf(r.text === null || r.text === undefined ? null : String(r.text))
      const l = left.get(phrase)
      left.set(phrase, {
        ...u,
        phrase,
        last_ts: Math.max(l?.last_ts ?? Number.NEGATIVE_INFINITY, Number(r.ts)),
        n: (l?.n ?? 0) + 1,
      })
    }
    truth.push(...left.values())
  }
  yield* moveUsers(d, had, truth, phrases)
  const rows = [...(phrases.get(NH_PHRASES)?.values() ?? [])]
  const deferred = late?.takes(NH_PHRASES) === true
  if (deferred) yield* applySums(d, NH_PHRASES, rows, late)
  else for (const q of upsertQueries(d, NH_PHRASES, rows)) yield q
  // Latest time and spelling of each touched phrase-hour, from the inputs left in it.
  const t = d.table(NH_PHRASES.name)
  const nh = d.table(NOT_HANDLED.name)
  for (const r of rows.filter((x) => Number(x.n) < 0))
    yield {
      sql: `UPDATE ${t} SET
          last_ts = (SELECT max(last_ts) FROM ${nh} s WHERE s.bot = ${t}.bot AND s.hour = ${t}.hour AND s.phrase = ${t}.phrase),
          text = (SELECT min(text) FROM ${nh} s WHERE s.bot = ${t}.bot AND s.hour = ${t}.hour AND s.phrase = ${t}.phrase)
        WHERE bot = ? AND hour = ? AND phrase = ?`,
      params: [r.bot, r.hour, r.phrase],
    }
  // (Deferred: the writer drops the emptied rows after its upsert.)
  if (!deferred) for (const q of dropEmptyQueries(d, NH_PHRASES, rows)) yield q
}

// ------------------------------------------------------------------ segments

type Counted = { bot: string; user_id: string; first_hour: number; last_hour: number; pairs: string }

/**
 * Brings the first/last-seen counts and the segment counts of these users in line with their
 * profile rows (first and last seen, latest metadata) as they are now in this transaction: at
 * ingest, after erasure and retention. A user's counts move only when their first or last hour or
 * their metadata's pairs change (a user's later messages in the same hour write nothing here).
 */
function* syncSegments(d: Dialect, users: ReadonlyArray<{ bot: string; user_id: string }>, late?: Late): Steps {
  if (users.length === 0) return
  const had = new Map<string, Counted>()
  for (const r of yield* selectKeys(
    d,
    USER_SEGMENTS,
    'bot, user_id, first_hour, last_hour, pairs',
    users,
    USER_SEGMENTS.keys,
  ))
    had.set(userKey(String(r.bot), String(r.user_id)), {
      bot: String(r.bot),
      user_id: String(r.user_id),
      first_hour: Number(r.first_hour),
      last_hour: Number(r.last_hour),
      pairs: String(r.pairs),
    })
  const now = new Map<string, Counted>()
  for (const r of yield* selectKeys(d, USERS, 'bot, user_id, first_ts, last_ts, user_json', users, USERS.keys)) {
    const pairs = r.user_json === null || r.user_json === undefined ? [] : segmentPairs(String(r.user_json))
    now.set(userKey(String(r.bot), String(r.user_id)), {
      bot: String(r.bot),
      user_id: String(r.user_id),
      first_hour: floorHour(Number(r.first_ts)),
      last_hour: floorHour(Number(r.last_ts)),
      pairs: JSON.stringify(pairs),
    })
  }
  const counts: Deltas = new Map()
  const count = (c: Counted, sign: 1 | -1) => {
    addRow(counts, USER_SEEN, { bot: c.bot, hour: c.first_hour, firsts: sign, lasts: 0 })
    addRow(counts, USER_SEEN, { bot: c.bot, hour: c.last_hour, firsts: 0, lasts: sign })
    for (const [field, value] of JSON.parse(c.pairs) as Array<[string, string]>) {
      addRow(counts, SEGMENTS, { bot: c.bot, hour: c.first_hour, field, value, firsts: sign, lasts: 0 })
      addRow(counts, SEGMENTS, { bot: c.bot, hour: c.last_hour, field, value, firsts: 0, lasts: sign })
    }
  }
  const same = (a: Counted | undefined, b: Counted | undefined) =>
    a !== undefined &&
    b !== undefined &&
    a.first_hour === b.first_hour &&
    a.last_hour === b.last_hour &&
    a.pairs === b.pairs
  const changed: Counted[] = []
  const gone: RollupRow[] = []
  for (const u of users) {
    const k = userKey(u.bot, u.user_id)
    const was = had.get(k)
    const is = now.get(k)
    if (same(was, is) || (!was && !is)) continue
    if (was) count(was, -1)
    if (is) {
      count(is, 1)
      changed.push(is)
    } else gone.push({ bot: u.bot, user_id: u.user_id })
  }
  for (const spec of [SEGMENTS, USER_SEEN])
    yield* applySums(
      d,
      spec,
      [...(counts.get(spec)?.values() ?? [])].filter((r) => r.firsts !== 0 || r.lasts !== 0),
      late,
    )
  for (const q of replaceQueries(d, USER_SEGMENTS, changed)) yield q
  for (const q of deleteKeysQueries(d, USER_SEGMENTS, gone)) yield q
}

/** The users a set of changes touched (bot × user of the profile rows). */
const profileUsers = (deltas: Deltas) =>
  [...(deltas.get(USERS)?.values() ?? [])].map((r) => ({ bot: String(r.bot), user_id: String(r.user_id) }))

// ------------------------------------------------------------------ hooks

/**
 * At ingest, after the rollups' changes were merged: the NotHandled phrases and the segments.
 * Every user these change — and every user of the batch, whom the sessions lock next — is locked
 * here in one ordered step, so writers never hold one user's lock while waiting for another's.
 */
export function* ingestReadSummaries(d: Dialect, deltas: Deltas, late?: Late): Steps {
  const users = profileUsers(deltas)
  yield* lockUsers(d, [
    ...new Set([
      ...users.map((u) => userKey(u.bot, u.user_id)),
      ...[...(deltas.get(NOT_HANDLED)?.values() ?? [])].map((r) => userKey(String(r.bot), String(r.user_id))),
    ]),
  ])
  yield* ingestPhrases(d, deltas, late)
  yield* syncSegments(d, users, late)
}

/** After erasure or retention, once the rollups took the deleted messages back. */
export function* takeBackReadSummaries(d: Dialect, doomed: readonly RollupMessage[], late?: Late): Steps {
  yield* lockUsers(d, [...new Set(doomed.map((m) => userKey(m.bot, m.userId)))])
  yield* takeBackPhrases(d, doomed, late)
  const users = new Map<string, { bot: string; user_id: string }>()
  for (const m of doomed) if (m.userId !== '') users.set(userKey(m.bot, m.userId), { bot: m.bot, user_id: m.userId })
  yield* syncSegments(d, [...users.values()], late)
}

/** Profiles read per step of a rebuild. */
const REBUILD_PAGE = 5_000

/**
 * Derives these summaries from the rollups' NotHandled rows and the user profiles (the migration
 * that adds them; the scale bench's bulk seed): NotHandled in three statements, segments from the
 * profiles read in keyset pages.
 */
export function* rebuildReadSummaries(d: Dialect): Steps {
  for (const spec of READ_SUMMARIES) yield { sql: `DELETE FROM ${d.table(spec.name)}`, params: [] }
  const nh = d.table(NOT_HANDLED.name)
  const phrases = d.table(NH_PHRASES.name)
  const users = d.table(NH_USERS.name)
  yield {
    sql: `INSERT INTO ${users} (bot, user_id, phrase, last_ts, n)
      SELECT bot, user_id, phrase, max(last_ts), sum(n) FROM ${nh} GROUP BY bot, user_id, phrase`,
    params: [],
  }
  yield {
    sql: `INSERT INTO ${phrases} (bot, hour, phrase, n, users, last_ts, text)
      SELECT bot, hour, phrase, sum(n), 0, max(last_ts), min(text) FROM ${nh} GROUP BY bot, hour, phrase`,
    params: [],
  }
  yield {
    sql: `UPDATE ${phrases} SET users = c.users
      FROM (SELECT bot, phrase, (last_ts / ${HOUR_MS}) * ${HOUR_MS} AS hour, count(*) AS users FROM ${users}
        GROUP BY bot, phrase, (last_ts / ${HOUR_MS}) * ${HOUR_MS}) c
      WHERE ${phrases}.bot = c.bot AND ${phrases}.phrase = c.phrase AND ${phrases}.hour = c.hour`,
    params: [],
  }
  const profiles = d.table(USERS.name)
  const counts: Deltas = new Map()
  for (let after: [string, string] = ['', '']; ; ) {
    const rows = yield {
      sql: `SELECT bot, user_id, first_ts, last_ts, user_json FROM ${profiles}
        WHERE (bot, user_id) > (?, ?) AND user_json IS NOT NULL ORDER BY bot, user_id LIMIT ${REBUILD_PAGE}`,
      // A row comparison: a range of the primary key (an OR of the two columns was a scan per page).
      params: [after[0], after[1]],
    }
    if (rows.length === 0) break
    const last = rows[rows.length - 1] as Row
    after = [String(last.bot), String(last.user_id)]
    const counted: RollupRow[] = []
    for (const r of rows) {
      const pairs = segmentPairs(String(r.user_json))
      if (pairs.length === 0) continue
      const c = {
        bot: String(r.bot),
        user_id: String(r.user_id),
        first_hour: floorHour(Number(r.first_ts)),
        last_hour: floorHour(Number(r.last_ts)),
        pairs: JSON.stringify(pairs),
      }
      counted.push(c)
      for (const [field, value] of pairs) {
        addRow(counts, SEGMENTS, { bot: c.bot, hour: c.first_hour, field, value, firsts: 1, lasts: 0 })
        addRow(counts, SEGMENTS, { bot: c.bot, hour: c.last_hour, field, value, firsts: 0, lasts: 1 })
      }
    }
    for (const q of replaceQueries(d, USER_SEGMENTS, counted)) yield q
  }
  const rows = [...(counts.get(SEGMENTS)?.values() ?? [])]
  for (let i = 0; i < rows.length; i += REBUILD_PAGE)
    for (const q of upsertQueries(d, SEGMENTS, rows.slice(i, i + REBUILD_PAGE))) yield q
  yield* rebuildUserSeen(d)
}

/**
 * Gives every profile its row in `user_segments` (a user without metadata: pairs `[]`) and derives
 * the first/last-seen counts from those rows, in three statements: the end of the rebuild above,
 * and the migration that adds the counts (over `user_segments` as ingest kept it).
 */
export function* rebuildUserSeen(d: Dialect): Steps {
  const profiles = d.table(USERS.name)
  const counted = d.table(USER_SEGMENTS.name)
  const seen = d.table(USER_SEEN.name)
  const hour = (col: string) => `(${col} / ${HOUR_MS}) * ${HOUR_MS}`
  yield {
    sql: `INSERT INTO ${counted} (bot, user_id, first_hour, last_hour, pairs)
      SELECT p.bot, p.user_id, ${hour('p.first_ts')}, ${hour('p.last_ts')}, '[]' FROM ${profiles} p
      WHERE NOT EXISTS (SELECT 1 FROM ${counted} c WHERE c.bot = p.bot AND c.user_id = p.user_id)`,
    params: [],
  }
  yield { sql: `DELETE FROM ${seen}`, params: [] }
  yield {
    sql: `INSERT INTO ${seen} (bot, hour, firsts, lasts)
      SELECT bot, hour, sum(firsts), sum(lasts) FROM (
        SELECT bot, first_hour AS hour, 1 AS firsts, 0 AS lasts FROM ${counted}
        UNION ALL SELECT bot, last_hour, 0, 1 FROM ${counted}) x
      GROUP BY bot, hour`,
    params: [],
  }
}
