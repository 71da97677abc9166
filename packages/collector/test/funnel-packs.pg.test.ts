/**
 * Funnel step packs on a real PostgreSQL (funnel-packs-pg.ts): a funnel counted from packs and
 * the last days' rows equals the recount from the stored messages — before any pack (the
 * statement), after packing, after a record dated in a packed day, an erasure and the retention
 * sweep — and a pack is read only while its day has not changed since.
 */
import { PgRecordStore } from '@convotrack/collector'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { FunnelStep } from '../src/reports/analytics-types'
import { postgresDialect as d } from '../src/reports/dialect'
import { funnelFromPacks, type StepRows } from '../src/reports/funnel-packs'
import { funnelPacksDdl, MAX_LOOSE_DAYS, packedFunnel, stepsToPack } from '../src/reports/funnel-packs-pg'
import { DAY_MS, HOUR_MS } from '../src/reports/range'
import { runStepsAsync } from '../src/reports/rollup-writes'
import { PG_MIGRATIONS } from '../src/store/postgres/pg-migrations'
import { RECOUNT_HERE } from './analytics-recount'
import { busiestWalk, expectFunnelRecount, FUNNELS, funnelOf, stepItem as step, trafficOn } from './funnel-recount'
import { allMessages, load } from './rollup-contract'
import { type PostgresServer, startPostgres } from './support/postgres'

const BASE = Date.UTC(2026, 2, 1)

let server: PostgresServer
beforeAll(async () => {
  if (RECOUNT_HERE) server = await startPostgres()
})
afterAll(async () => {
  await server?.destroy()
})

// The packs' SQL and the database are the same on every Node line: run on the system Node's
// (RECOUNT_HERE); the count's JavaScript runs on every line (funnel-packs.test.ts).
describe.skipIf(!RECOUNT_HERE)('funnel step packs: PostgreSQL', () => {
  const opened: PgRecordStore[] = []
  const clients: pg.Client[] = []
  afterAll(async () => {
    for (const c of clients) await c.end().catch(() => {})
    for (const s of opened) await s.close()
  })

  async function fresh() {
    const url = await server.createDatabase()
    const store = await PgRecordStore.open(url, { listen: false })
    opened.push(store)
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    clients.push(client)
    const run = <T>(steps: Parameters<typeof runStepsAsync<T>>[0]) =>
      runStepsAsync(steps, async (q) => (await client.query(d.sql(q.sql), q.params as unknown[])).rows)
    const count = async (table: string) =>
      Number((await client.query(`SELECT count(*) AS n FROM convotrack_${table}`)).rows[0].n)
    return { store, client, run, count, url }
  }

  /** Every step the stored messages hold. */
  async function allSteps(client: pg.Client): Promise<FunnelStep[]> {
    const rows = await client.query('SELECT DISTINCT kind, name FROM convotrack_rollup_user_steps ORDER BY kind, name')
    return rows.rows.map((r) => ({ kind: r.kind, name: r.name }))
  }

  const RANGES = [
    { from: BASE + 5 * HOUR_MS, to: BASE + 30 * HOUR_MS },
    { from: BASE + DAY_MS, to: BASE + 7 * DAY_MS },
    { from: BASE + 6 * DAY_MS + 3 * HOUR_MS, to: BASE + 40 * DAY_MS },
  ]

  it('equal the recount before any pack, from packs after packing, and read no row of a packed day', async () => {
    const { store, client, run, count } = await fresh()
    // The clock the packs are read at: before any packing (a day that becomes old enough after it is not packed).
    const t0 = Date.now()
    await load(store, [...trafficOn(0, 500, 31), ...trafficOn(5, 500, 32)])
    let all = await allMessages(store)
    // Before packing: more days than MAX_LOOSE_DAYS without a pack, the statement counts.
    const walk = busiestWalk(all)
    const before = await run(packedFunnel(d, { steps: walk }, t0))
    expect(before.lines).toBeNull()
    expect(before.unpacked).toBeGreaterThan(MAX_LOOSE_DAYS)
    await expectFunnelRecount(store, all, RANGES)

    await store.packFunnels(await allSteps(client))
    expect(await count('funnel_packs')).toBeGreaterThan(0)
    expect(await count('funnel_users')).toBeGreaterThan(0)
    // A range ending in the future too: no day after a step's last row is read.
    for (const steps of [...FUNNELS, walk])
      for (const q of [
        {},
        ...RANGES,
        { bot: 'shop' },
        { to: BASE + 2 * DAY_MS },
        { from: BASE, to: t0 + 40 * DAY_MS },
      ]) {
        const got = await run(packedFunnel(d, { ...q, steps }, t0))
        expect(got.unpacked, JSON.stringify(q)).toBe(0)
        expect(got.lines, `${JSON.stringify(q)} ${JSON.stringify(steps)}`).toEqual(funnelOf(all, q, steps))
      }
    await expectFunnelRecount(store, all, RANGES)

    // The packs' days are not read as rows: with the step rows of those days gone (but each
    // step's first and last hour, where its read starts and ends), the packed funnel still counts them.
    await client.query('BEGIN')
    const gone = await client.query(`DELETE FROM convotrack_rollup_user_steps s
      WHERE s.hour > (SELECT min(hour) FROM convotrack_rollup_user_steps x WHERE x.kind = s.kind AND x.name = s.name)
        AND s.hour < (SELECT max(hour) FROM convotrack_rollup_user_steps x WHERE x.kind = s.kind AND x.name = s.name)`)
    expect(gone.rowCount).toBeGreaterThan(100)
    const hidden = await run(packedFunnel(d, { steps: walk }, t0))
    await client.query('ROLLBACK')
    expect(hidden.lines).toEqual(funnelOf(all, {}, walk))
    expect(hidden.lines?.at(-1)?.users).toBeGreaterThan(0)

    // A record dated in a packed day: that day is read as rows until packed again.
    const late = BASE + DAY_MS + 10 * HOUR_MS
    const user = 'late-user'
    const items = walk.map((s, i) => step('shop', user, late + i * 60_000, s))
    for (const item of items) await store.add(item.record, item.messages)
    all = await allMessages(store)
    expect(funnelOf(all, {}, walk)).not.toEqual(hidden.lines)
    const changed = await run(packedFunnel(d, { steps: walk }, t0))
    // The day is one of each step: read as rows for each.
    expect(changed.unpacked).toBe(walk.length)
    expect(changed.lines).toEqual(funnelOf(all, {}, walk))
    // The hourly job packs the steps packed before again: that day too.
    await store.repackFunnels()
    const again = await run(packedFunnel(d, { steps: walk }, t0))
    expect(again.unpacked).toBe(0)
    expect(again.lines).toEqual(funnelOf(all, {}, walk))

    // Erasure: the user's days read as rows, their number gone with their last step row.
    await store.eraseUser('shop', user)
    all = await allMessages(store)
    expect((await run(packedFunnel(d, { steps: walk }, t0))).lines).toEqual(funnelOf(all, {}, walk))
    expect((await client.query(`SELECT 1 FROM convotrack_funnel_users WHERE user_id = $1`, [user])).rowCount).toBe(0)
    await store.packFunnels(await allSteps(client))
    await expectFunnelRecount(store, all, RANGES)

    // Retention sweeps the first days' records: their days change, the funnels follow.
    while ((await store.deleteOlderThan({ before: BASE + 10 * DAY_MS + 200_000, limit: 50 })) > 0) {}
    all = await allMessages(store)
    expect((await run(packedFunnel(d, { steps: walk }, t0))).unpacked).toBeGreaterThan(0)
    await expectFunnelRecount(store, all, RANGES)
    await store.packFunnels(await allSteps(client))
    for (const steps of [...FUNNELS, walk]) {
      const got = await run(packedFunnel(d, { steps }, t0))
      expect(got.unpacked).toBe(0)
      expect(got.lines).toEqual(funnelOf(all, {}, steps))
    }
  })

  it('a funnel the packs do not cover yet is counted by the statement and starts the packer', async () => {
    const { store, client, run, count } = await fresh()
    // The clock the packs are read at: before any packing (a day that becomes old enough after it is not packed).
    const t0 = Date.now()
    await load(store, trafficOn(0, 400, 41))
    const all = await allMessages(store)
    const walk = busiestWalk(all)
    expect(await store.funnel({ steps: walk })).toEqual(funnelOf(all, {}, walk))
    // The packer started by that count: waited for here (an empty list adds no step).
    await store.packFunnels([])
    expect(await count('funnel_pack_days')).toBeGreaterThan(0)
    const got = await run(packedFunnel(d, { steps: walk }, t0))
    expect(got.unpacked).toBe(0)
    expect(got.lines).toEqual(funnelOf(all, {}, walk))
    expect(await allSteps(client)).not.toHaveLength(0)
  })

  it('the last days are read as rows: a user the packer has not numbered counts at once', async () => {
    const { store, client, run } = await fresh()
    const t0 = Date.now()
    await load(store, trafficOn(0, 300, 51))
    await store.packFunnels(await allSteps(client))
    const now = Date.now() - HOUR_MS
    const steps: FunnelStep[] = [
      { kind: 'intent', name: 'buy' },
      { kind: 'event', name: 'buy' },
    ]
    for (const [i, s] of steps.entries()) {
      const item = step('shop', 'today-user', now + i * 1000, s)
      await store.add(item.record, item.messages)
    }
    const all = await allMessages(store)
    const got = await run(packedFunnel(d, { steps }, t0))
    expect(got.lines).toEqual(funnelOf(all, {}, steps))
    expect((await client.query(`SELECT 1 FROM convotrack_funnel_users WHERE user_id = 'today-user'`)).rowCount).toBe(0)
    expect(got.lines?.at(-1)?.users).toBeGreaterThan(0)
  })

  it('a pack is made again a week after it was made: a change no writer counted up is counted within a week', async () => {
    const { store, client, run } = await fresh()
    const t0 = Date.now()
    await load(store, trafficOn(0, 400, 71))
    const all = await allMessages(store)
    const walk = busiestWalk(all)
    // Another step packed too, with rows on days 0, 1 and 2, emptied by hand below: day 1 (between
    // its first and last), then day 0 (its first).
    const others = (await allSteps(client)).filter((x) => !walk.some((w) => w.kind === x.kind && w.name === x.name))
    const rowsOn = async (x: FunnelStep, day: number) =>
      (
        await client.query(
          'SELECT 1 FROM convotrack_rollup_user_steps WHERE kind = $1 AND name = $2 AND hour >= $3 AND hour < $4',
          [x.kind, x.name, BASE + day * DAY_MS, BASE + (day + 1) * DAY_MS],
        )
      ).rowCount ?? 0
    let other: FunnelStep | undefined
    for (const x of others)
      if (!other && (await rowsOn(x, 0)) > 0 && (await rowsOn(x, 1)) > 0 && (await rowsOn(x, 2)) > 0) other = x
    if (!other) throw new Error('no other step on days 0, 1 and 2')
    await store.packFunnels([...walk, other])
    const packsOn = async (day: number) =>
      Number(
        (
          await client.query(
            'SELECT count(*) AS n FROM convotrack_funnel_packs WHERE kind = $1 AND name = $2 AND day = $3',
            [other?.kind, other?.name, BASE + day * DAY_MS],
          )
        ).rows[0].n,
      )
    const empty = (day: number) =>
      client.query(
        'DELETE FROM convotrack_rollup_user_steps WHERE kind = $1 AND name = $2 AND hour >= $3 AND hour < $4',
        [other?.kind, other?.name, BASE + day * DAY_MS, BASE + (day + 1) * DAY_MS],
      )
    expect(await packsOn(0)).toBeGreaterThan(0)
    expect(await packsOn(1)).toBeGreaterThan(0)
    const want = funnelOf(all, {}, walk)
    expect((await run(packedFunnel(d, { steps: walk }, t0))).lines).toEqual(want)
    // A change to a packed day's step rows that counted nothing up (as a collector of the version
    // before would make during an upgrade): a user's walk added by hand on day 1, an hour a step.
    for (const [i, st] of walk.entries()) {
      const ts = BASE + DAY_MS + (10 + i) * HOUR_MS + 60_000
      await client.query(
        `INSERT INTO convotrack_rollup_user_steps (bot, hour, kind, name, user_id, n, first_ts, last_ts)
          VALUES ('shop', $1, $2, $3, 'by-hand', 1, $4, $4)`,
        [ts - (ts % HOUR_MS), st.kind, st.name, ts],
      )
    }
    await empty(1)
    // The hourly job within the week: the packs stand (nothing told them).
    await store.repackFunnels()
    expect((await run(packedFunnel(d, { steps: walk }, t0))).lines).toEqual(want)
    // A week after they were made, the hourly job makes them again: the change is counted.
    await client.query(`UPDATE convotrack_funnel_pack_days SET made = made - $1`, [8 * DAY_MS])
    await store.repackFunnels()
    // The other step's emptied day is packed empty: its packs from before are gone; so are those
    // of a first day emptied (before the step's first row now).
    expect(await packsOn(1)).toBe(0)
    await empty(0)
    await client.query(`UPDATE convotrack_funnel_pack_days SET made = made - $1`, [8 * DAY_MS])
    await store.repackFunnels()
    expect(await packsOn(0)).toBe(0)
    const after = await run(packedFunnel(d, { steps: walk }, t0))
    expect(after.lines?.map((l) => l.users)).toEqual(want.map((l) => l.users + 1))
    // What the hourly rows hold now, counted from the rows themselves (no pack).
    const numbers = new Map<string, number>()
    const rowsNow: StepRows[] = []
    for (const s of walk) {
      const rows = await client.query(
        `SELECT bot, user_id, first_ts, last_ts FROM convotrack_rollup_user_steps WHERE kind = $1 AND name = $2`,
        [s.kind, s.name],
      )
      rowsNow.push({
        packs: [],
        rows: rows.rows.map((r) => {
          const key = `${r.bot}\u0000${r.user_id}`
          if (!numbers.has(key)) numbers.set(key, numbers.size)
          return { user: numbers.get(key) as number, first: Number(r.first_ts), last: Number(r.last_ts) }
        }),
      })
    }
    expect(after.lines?.map((l) => l.users)).toEqual(funnelFromPacks(rowsNow, numbers.size, 0, null))
  })

  it('a store from before the packs takes migrations 23 on (again: nothing changes) and packs its funnels', async () => {
    const url = await server.createDatabase()
    const old = await PgRecordStore.open(url, { listen: false })
    await load(old, trafficOn(0, 300, 61))
    await old.close()
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    clients.push(client)
    // As the database of the version before: no pack tables, migrations 23 and 24 not applied.
    await client.query(`DROP TABLE convotrack_funnel_packs, convotrack_funnel_pack_days, convotrack_funnel_day_gens,
      convotrack_funnel_users; DROP SEQUENCE convotrack_funnel_user_nums; DELETE FROM convotrack_migrations WHERE version >= 23`)
    const store = await PgRecordStore.open(url, { listen: false })
    opened.push(store)
    expect((await client.query('SELECT max(version) AS v FROM convotrack_migrations')).rows[0].v).toBe(
      Math.max(...PG_MIGRATIONS.map((m) => m.version)),
    )
    // Its statements run again change nothing (IF NOT EXISTS).
    await client.query(funnelPacksDdl(d))
    const t0 = Date.now()
    const all = await allMessages(store)
    const walk = busiestWalk(all)
    await store.packFunnels(walk)
    const got = await runStepsAsync(
      packedFunnel(d, { steps: walk }, t0),
      async (q) => (await client.query(d.sql(q.sql), q.params as unknown[])).rows,
    )
    expect(got.unpacked).toBe(0)
    expect(got.lines).toEqual(funnelOf(all, {}, walk))
    expect(got.lines?.at(-1)?.users).toBeGreaterThan(0)
  })

  it('packs made as bytea (migration 23) are kept by migration 24 as base64 text: read as they were, not made again', async () => {
    const { store, client, run, count, url } = await fresh()
    const t0 = Date.now()
    await load(store, [...trafficOn(0, 300, 71), ...trafficOn(4, 300, 72)])
    const all = await allMessages(store)
    const walk = busiestWalk(all)
    await store.packFunnels(walk)
    const packs = async () =>
      (await client.query('SELECT kind, name, day, bot, gen, data FROM convotrack_funnel_packs ORDER BY 1, 2, 3, 4'))
        .rows
    const made = await packs()
    expect(made.length).toBeGreaterThan(0)
    // As a store at migration 23: the packs' bytes in a bytea column.
    await client.query(`ALTER TABLE convotrack_funnel_packs ALTER COLUMN data TYPE bytea USING decode(data, 'base64');
      DELETE FROM convotrack_migrations WHERE version = 24`)
    expect(
      (await client.query('SELECT pg_typeof(data)::text AS t FROM convotrack_funnel_packs LIMIT 1')).rows[0].t,
    ).toBe('bytea')
    await store.close()
    opened.splice(opened.indexOf(store), 1)
    const again = await PgRecordStore.open(url, { listen: false })
    opened.push(again)
    const column = await client.query(
      `SELECT data_type, (SELECT attstorage FROM pg_attribute WHERE attrelid = 'convotrack_funnel_packs'::regclass AND attname = 'data') AS storage
        FROM information_schema.columns WHERE table_name = 'convotrack_funnel_packs' AND column_name = 'data'`,
    )
    expect(column.rows[0]).toEqual({ data_type: 'text', storage: 'e' })
    // The same packs, byte for byte, and the funnel read from them alone.
    expect(await packs()).toEqual(made)
    expect(await count('funnel_packs')).toBe(made.length)
    const got = await run(packedFunnel(d, { steps: walk }, t0))
    expect(got.unpacked).toBe(0)
    expect(got.lines).toEqual(funnelOf(all, {}, walk))
    expect(got.lines?.at(-1)?.users).toBeGreaterThan(0)
    // Nothing made again.
    await again.packFunnels(walk)
    expect(await packs()).toEqual(made)
  })

  it("the collector's job packs every step with rows, not only a funnel's: a funnel over any steps is read from packs at its first count", async () => {
    const { store, client, run, count } = await fresh()
    const t0 = Date.now()
    await load(store, [...trafficOn(0, 400, 81), ...trafficOn(6, 400, 82)])
    const all = await allMessages(store)
    const steps = await allSteps(client)
    expect(steps.length).toBeGreaterThan(3)
    // Up to a number of steps with rows, in kind and name order (one index probe each).
    expect(await run(stepsToPack(d, 2))).toEqual(steps.slice(0, 2))
    expect(await run(stepsToPack(d))).toEqual(steps)
    // A step packed for a funnel is packed again by the job whatever the bound.
    const last = steps.at(-1) as FunnelStep
    await store.packFunnels([last])
    expect(await run(stepsToPack(d, 2))).toEqual([...steps.slice(0, 2), last])
    expect(await count('funnel_pack_days')).toBeGreaterThan(0)

    await store.repackFunnels()
    const packed = await client.query('SELECT DISTINCT kind, name FROM convotrack_funnel_pack_days ORDER BY kind, name')
    expect(packed.rows).toEqual(steps)
    // Any steps, never asked for before: from packs alone, the recount's answer.
    const walks = [...FUNNELS, busiestWalk(all), [steps[0], steps.at(-1)] as FunnelStep[]]
    for (const walk of walks) {
      const got = await run(packedFunnel(d, { steps: walk }, t0))
      expect(got.unpacked, JSON.stringify(walk)).toBe(0)
      expect(got.lines, JSON.stringify(walk)).toEqual(funnelOf(all, {}, walk))
    }
  })

  it("the collector's job first runs 5 minutes after the store opens, then every hour", async () => {
    const url = await server.createDatabase()
    // Timers driven by the test (the database's I/O is real).
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] })
    try {
      const store = await PgRecordStore.open(url, { listen: false })
      opened.push(store)
      let runs = 0
      store.repackFunnels = async () => {
        runs++
      }
      vi.advanceTimersByTime(5 * 60_000 - 1)
      expect(runs).toBe(0)
      vi.advanceTimersByTime(1)
      expect(runs).toBe(1)
      vi.advanceTimersByTime(3_600_000 - 1)
      expect(runs).toBe(1)
      vi.advanceTimersByTime(1)
      expect(runs).toBe(2)
      await store.close()
      opened.splice(opened.indexOf(store), 1)
      vi.advanceTimersByTime(3 * 3_600_000)
      expect(runs).toBe(2)
    } finally {
      vi.useRealTimers()
    }
  })

  it("the day's hours that ended 3 hours ago are packed: only the rows after them are read, and a record dated in one of them is counted", async () => {
    const { store, client, run } = await fresh()
    const steps: FunnelStep[] = [
      { kind: 'intent', name: 'hello' },
      { kind: 'event', name: 'paid' },
    ]
    const now = Date.now()
    // 40 users through both steps, from 9 hours ago to an hour ago.
    for (let u = 0; u < 40; u++) {
      const t = now - 9 * HOUR_MS + u * 12 * 60_000
      for (const [i, s] of steps.entries()) {
        const item = step('shop', `u${u}`, t + i * 60_000, s)
        await store.add(item.record, item.messages)
      }
    }
    let all = await allMessages(store)
    await store.packFunnels(steps)
    // The day of 3 hours ago is packed up to that hour (none of it from 03:00 to 04:00 UTC).
    const upto = Math.floor((Date.now() - 3 * HOUR_MS) / HOUR_MS) * HOUR_MS
    const day = upto - (upto % DAY_MS)
    const days = await client.query(
      'SELECT day, upto FROM convotrack_funnel_pack_days WHERE kind = $1 AND name = $2 AND day = $3',
      [steps[0]?.kind, steps[0]?.name, day],
    )
    const packedTo = days.rows.map((r) => Number(r.upto))
    let got = await run(packedFunnel(d, { steps }))
    expect(got.lines).toEqual(funnelOf(all, {}, steps))
    expect(got.unpacked).toBe(0)
    if (upto > day && upto > now - 9 * HOUR_MS) {
      expect(packedTo).toEqual([upto])
      // Those hours are read from the packs: with their rows gone (rolled back), the same counts.
      await client.query('BEGIN')
      const gone = await client.query(
        `DELETE FROM convotrack_rollup_user_steps WHERE name IN ('hello', 'paid') AND hour >= $1 AND hour < $2`,
        [day, upto],
      )
      expect(gone.rowCount).toBeGreaterThan(0)
      const hidden = await run(packedFunnel(d, { steps }))
      await client.query('ROLLBACK')
      expect(hidden.lines).toEqual(funnelOf(all, {}, steps))
    }
    // A record dated in a packed hour (an hour before `upto`): counted at once, packed again after.
    const late = Math.max(upto - HOUR_MS, now - 9 * HOUR_MS)
    for (const [i, s] of steps.entries()) {
      const item = step('shop', 'late-user', late + i * 60_000, s)
      await store.add(item.record, item.messages)
    }
    all = await allMessages(store)
    got = await run(packedFunnel(d, { steps }))
    expect(got.lines).toEqual(funnelOf(all, {}, steps))
    expect(got.lines?.at(-1)?.users).toBe(41)
    await store.packFunnels(steps)
    got = await run(packedFunnel(d, { steps }))
    expect(got.lines).toEqual(funnelOf(all, {}, steps))
    expect(got.unpacked).toBe(0)
  })
})
