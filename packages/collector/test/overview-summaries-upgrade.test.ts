// A database from before the overview's handoff and feedback summaries (PostgreSQL migrations 27
// and 28, SQLite steps 23 and 24): the operators' actions already in its audit log are resolved to
// their users and the sessions they fall in marked and counted per hour, and the feedback rows
// summed by hour and by day, when it opens — the overview is what it was — and actions, messages
// and feedback after it go on counting.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PgRecordStore, type RecordStore, SqliteRecordStore } from '@convotrack/collector'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { item } from './store-contract'
import { openKeptSqlite } from './support/kept-sqlite'
import { POSTGRES_LOGIC_HERE, type PostgresServer, startPostgres } from './support/postgres'

const H = 3_600_000
const MIN = 60_000
const T = Date.UTC(2026, 2, 2)
const ALL = { from: T, to: T + 7 * 24 * H, tz: 'UTC' }

const inc = (user: string, at: number) =>
  item('shop', 'universal', 'incoming', { userId: user, text: `hi from ${user}` }, { at })
const answer = (user: string, at: number, intent: string) =>
  item('shop', 'universal', 'outgoing', { userId: user, text: 'answer', intent: { name: intent } }, { at })
const rate = (user: string, at: number, score: number) =>
  item(
    'shop',
    'generic',
    'event',
    { type: 'customEvent', name: 'feedback', userId: user, extraInfo: { score, scale: 'stars' } },
    { at },
  )

/**
 * Four users' six sessions; operator actions in two of them (two in one), one past a session's
 * gap, one of no handoff kind: 2 sessions handed off. Two rated answers on two UTC days.
 */
async function seed(store: RecordStore): Promise<void> {
  for (const i of [
    inc('ann', T + 10 * H),
    inc('ann', T + 10 * H + 10 * MIN),
    inc('ann', T + 14 * H),
    inc('ben', T + 11 * H),
    inc('cat', T + 12 * H),
    inc('dan', T + 13 * H),
    // Rated answers: ann's order.status 5 stars on the first day, ben's greet 1 star the next.
    answer('ann', T + 10 * H + MIN, 'order.status'),
    rate('ann', T + 10 * H + 2 * MIN, 5),
    answer('ben', T + 35 * H, 'greet'),
    rate('ben', T + 35 * H + MIN, 1),
  ])
    await store.add(i.record, i.messages)
  const act = (action: string, target: string, ts: number) =>
    store.addAudit({ ts, actor: 'op', action, bot: 'shop', target, detail: null })
  await act('pause', 'ann', T + 10 * H + 15 * MIN)
  await act('operator-message', 'ann', T + 10 * H + 16 * MIN)
  await act('claim', 'ben', T + 11 * H + 5 * MIN)
  // Past cat's gap: in no session.
  await act('pause', 'cat', T + 12 * H + 45 * MIN)
  await act('resume', 'dan', T + 13 * H + 5 * MIN)
}

/** The seeded world's overview: 6 sessions (ben's second day is another), 2 handed off; two ratings. */
const SEEDED = {
  sessions: 6,
  handoffs: 2,
  feedback: {
    count: 2,
    average: 0,
    byIntent: [
      { intent: 'greet', count: 1, average: -1 },
      { intent: 'order.status', count: 1, average: 1 },
    ],
  },
}

async function expectGoesOn(store: RecordStore): Promise<void> {
  try {
    expect(await store.overview(ALL)).toMatchObject(SEEDED)
    // Edges inside days: ben's rating from the hours of the partial last day.
    expect((await store.overview({ from: T + 5 * H, to: T + 36 * H, tz: 'UTC' })).feedback).toEqual(SEEDED.feedback)
    // cat's late message makes a session that covers the pause; dan's operator writes.
    const late = inc('cat', T + 12 * H + 40 * MIN)
    await store.add(late.record, late.messages)
    await store.addAudit({
      ts: T + 13 * H + 6 * MIN,
      actor: 'op',
      action: 'operator-message',
      bot: 'shop',
      target: 'dan',
      detail: null,
    })
    const more = rate('dan', T + 13 * H + 7 * MIN, 4)
    await store.add(more.record, more.messages)
    expect(await store.overview(ALL)).toMatchObject({ sessions: 7, handoffs: 4, feedback: { count: 3 } })
  } finally {
    await store.close()
  }
}

let server: PostgresServer | undefined
afterAll(async () => {
  await server?.destroy()
})

describe("upgrading to the overview's handoff and feedback summaries", () => {
  it('SQLite: steps 23 and 24 derive them from the audit log, the sessions and the feedback hours', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'ct-handoffs-')), 'old.db')
    const store = new SqliteRecordStore(file)
    await seed(store)
    expect(await store.overview(ALL)).toMatchObject(SEEDED)
    await store.close()
    // As the file of the version before: no marks, no hours, no column, no feedback totals.
    const db = openKeptSqlite(file)
    db.exec(`DROP TABLE handoff_marks; DROP TABLE rollup_handoffs; ALTER TABLE sessions DROP COLUMN handoff;
      DROP TABLE rollup_feedback_hours; DROP TABLE rollup_feedback_days`)
    db.pragma('user_version = 22')
    db.close()
    await expectGoesOn(new SqliteRecordStore(file))
  })

  it.skipIf(!POSTGRES_LOGIC_HERE)(
    'PostgreSQL: migrations 27 and 28 derive them from the audit log, the sessions and the feedback hours',
    async () => {
      server = await startPostgres()
      const url = await server.createDatabase()
      const store = await PgRecordStore.open(url, { listen: false })
      await seed(store)
      expect(await store.overview(ALL)).toMatchObject(SEEDED)
      await store.close()
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      try {
        await client.query(`DROP TABLE convotrack_handoff_marks, convotrack_rollup_handoffs,
          convotrack_rollup_feedback_hours, convotrack_rollup_feedback_days;
        ALTER TABLE convotrack_sessions DROP COLUMN handoff;
        DELETE FROM convotrack_migrations WHERE version >= 27`)
      } finally {
        await client.end()
      }
      await expectGoesOn(await PgRecordStore.open(url, { listen: false }))
    },
  )
})
