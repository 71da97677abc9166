import type Database from 'better-sqlite3'
import { analyticsDdl, FEEDBACK_DAYS, FEEDBACK_HOURS, USER_STEPS } from '../../reports/analytics-tables'
import {
  DEFAULT_SESSION_GAP_MS,
  rebuildAnalytics,
  rebuildFeedbackTotals,
  rebuildSteps,
} from '../../reports/analytics-writes'
import { conversationStartsDdl, rebuildConversationStarts } from '../../reports/conversation-starts'
import { type Query, sqliteDialect } from '../../reports/dialect'
import { spansIndexDdl } from '../../reports/funnel-spans'
import { handoffDdl, rebuildHandoffs } from '../../reports/handoff-summary'
import { nhHoursDdl, phraseDaysDdl, rebuildNhHours, rebuildPhraseDays } from '../../reports/nh-phrase-days'
import { rebuildReadSummaries, rebuildUserSeen } from '../../reports/read-summaries'
import { readSummariesDdl } from '../../reports/read-summary-tables'
import type { Row } from '../../reports/report-queries'
import { DAY_LINKS, rebuildDayLinks, rebuildPrevDays, retentionDdl } from '../../reports/retention-cohorts'
import { EVENT_DAYS, INTENT_DAYS, rollupDdl } from '../../reports/rollup-tables'
import { rebuildDayRollups, rebuildRollups, runSteps } from '../../reports/rollup-writes'
import { SQLITE_SEARCH_BY_TIME_DDL, SQLITE_SEARCH_DDL } from '../../reports/search-query'
import { rebuildUsage, rebuildUsageByHour, usageDdl } from '../../reports/usage-rollup'
import { migrateFingerprints } from './sqlite-fingerprints'
import { FUNNEL_SPANS } from './sqlite-funnel-spans'
import { HISTORY_SUMMARIES, ZONES_ON_DEMAND } from './sqlite-history-summaries'
import { LEAN_INGEST } from './sqlite-lean-ingest'

/** One schema step of a SQLite file; its number is kept in `PRAGMA user_version`. */
export interface SqliteMigration {
  version: number
  name: string
  apply(db: Database.Database, keep: Keep, run: Run): void
}

type Keep = <T extends object>(v: T) => T
/** Runs one statement (prepared once, kept), answering its rows. */
type Run = (q: Query) => Row[]

const BASE_SCHEMA = `
CREATE TABLE IF NOT EXISTS records (
  id INTEGER PRIMARY KEY,
  bot TEXT NOT NULL,
  platform TEXT NOT NULL,
  type TEXT NOT NULL,
  v TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  raw TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS records_bot ON records (bot);
CREATE TABLE IF NOT EXISTS messages (
  id INTEGER PRIMARY KEY,
  record_id INTEGER NOT NULL REFERENCES records(id),
  bot TEXT NOT NULL,
  platform TEXT NOT NULL,
  direction TEXT NOT NULL,
  user_id TEXT NOT NULL,
  conversation_id TEXT,
  thread TEXT NOT NULL,
  session_id TEXT,
  text TEXT,
  intent TEXT,
  confidence REAL,
  buttons TEXT,
  images TEXT,
  user_json TEXT,
  event_type TEXT,
  event_name TEXT,
  amount REAL,
  ts INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_thread ON messages (bot, thread, id);
CREATE TABLE IF NOT EXISTS pauses (
  bot TEXT NOT NULL,
  thread TEXT NOT NULL,
  paused INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (bot, thread)
);
CREATE INDEX IF NOT EXISTS messages_bot_user ON messages (bot, user_id, record_id);
CREATE INDEX IF NOT EXISTS messages_record ON messages (record_id);
CREATE INDEX IF NOT EXISTS records_received ON records (received_at);
CREATE TABLE IF NOT EXISTS audit (
  id INTEGER PRIMARY KEY,
  ts INTEGER NOT NULL,
  actor TEXT NOT NULL,
  action TEXT NOT NULL,
  bot TEXT,
  target TEXT,
  detail TEXT
);
CREATE INDEX IF NOT EXISTS audit_bot ON audit (bot, id);
CREATE TABLE IF NOT EXISTS messenger_pages (
  page_id TEXT PRIMARY KEY,
  app_secret TEXT NOT NULL,
  verify_token TEXT NOT NULL,
  bot TEXT
);
`

function addColumn(db: Database.Database, keep: Keep, table: string, column: string, type: string) {
  const columns = keep(db.prepare(`PRAGMA table_info(${table})`)).all() as Array<{ name: string }>
  if (!columns.some((c) => c.name === column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`)
}

/**
 * The SQLite schema, as numbered steps. Files made before the numbering (user_version 0) have
 * what step 1 creates, or part of it: every step is idempotent, so they take step 1 again.
 */
export const SQLITE_MIGRATIONS: readonly SqliteMigration[] = [
  {
    version: 1,
    name: 'records, messages, pauses, audit, messenger pages; idempotency keys',
    apply(db, keep) {
      db.exec(BASE_SCHEMA)
      addColumn(db, keep, 'records', 'idempotency_key', 'TEXT')
      db.exec(
        'CREATE UNIQUE INDEX IF NOT EXISTS records_idempotency ON records (bot, idempotency_key) WHERE idempotency_key IS NOT NULL',
      )
    },
  },
  {
    version: 2,
    name: 'reports at scale: event time, summary tables (rebuilt from the stored messages)',
    apply(db, keep, run) {
      // Rows stored before: event time unknown, their receive time stands for it (NULL = same as received_at / ts).
      addColumn(db, keep, 'records', 'event_ts', 'INTEGER')
      addColumn(db, keep, 'messages', 'received_at', 'INTEGER')
      addColumn(db, keep, 'messages', 'nh', 'INTEGER NOT NULL DEFAULT 0')
      addColumn(db, keep, 'messages', 'event_key', 'TEXT')
      db.exec(`
UPDATE messages SET event_key = CASE event_type
    WHEN 'pageLaunchEvent' THEN coalesce((SELECT json_extract(r.raw, '$.extraInfo.url') FROM records r WHERE r.id = record_id), event_name)
    WHEN 'referralEvent' THEN coalesce((SELECT json_extract(r.raw, '$.source') FROM records r WHERE r.id = record_id), '(none)')
    ELSE event_name END
  WHERE event_type IS NOT NULL AND event_key IS NULL;
-- Reports read the summaries: the indexes of the old full-table reports go.
DROP INDEX IF EXISTS messages_intent;
DROP INDEX IF EXISTS messages_event;
DROP INDEX IF EXISTS messages_user;
-- Transcripts in event-time order (the NotHandled look-back keeps messages_thread: arrival order); the firehose and minute buckets by event time.
CREATE INDEX IF NOT EXISTS messages_thread_ts ON messages (bot, thread, ts);
CREATE INDEX IF NOT EXISTS messages_ts ON messages (ts);
CREATE INDEX IF NOT EXISTS messages_bot_ts ON messages (bot, ts);
${rollupDdl(sqliteDialect)}
`)
      runSteps(rebuildRollups(sqliteDialect), run)
    },
  },
  {
    version: 3,
    name: 'idempotency fingerprints, kept after erasure',
    apply(db, keep) {
      migrateFingerprints(db, (sql) => keep(db.prepare(sql)))
    },
  },
  {
    version: 4,
    name: 'analytics: sessions, feedback, users per hour (derived from the stored messages)',
    apply(db, keep, run) {
      // A feedback event's normalised score and the intent of the answer it rated (set at ingest).
      addColumn(db, keep, 'messages', 'score', 'REAL')
      addColumn(db, keep, 'messages', 'rated_intent', 'TEXT')
      db.exec(analyticsDdl(sqliteDialect))
      runSteps(rebuildAnalytics(sqliteDialect), run)
    },
  },
  {
    version: 5,
    name: 'search: FTS5 over message text (kept by triggers)',
    apply(db) {
      db.exec(SQLITE_SEARCH_DDL)
    },
  },
  {
    version: 6,
    name: 'funnels: steps per user and hour (derived from the stored messages)',
    apply(db, _keep, run) {
      db.exec(rollupDdl(sqliteDialect, [USER_STEPS]))
      runSteps(rebuildSteps(sqliteDialect, false), run)
    },
  },
  {
    version: 7,
    name: 'LLM usage: tokens per hour, model and conversation (derived from the stored records)',
    apply(db, _keep, run) {
      db.exec(usageDdl(sqliteDialect))
      runSteps(rebuildUsage(sqliteDialect), run)
    },
  },
  {
    version: 8,
    name: 'NotHandled phrases per hour and segment counts per hour (derived from the summaries)',
    apply(db, _keep, run) {
      db.exec(readSummariesDdl(sqliteDialect))
      runSteps(rebuildReadSummaries(sqliteDialect), run)
    },
  },
  HISTORY_SUMMARIES,
  {
    version: 10,
    name: 'LLM usage per hour and model, conversations by their first answer of the day (derived from the usage summary)',
    apply(db, _keep, run) {
      db.exec(usageDdl(sqliteDialect))
      runSteps(rebuildUsageByHour(sqliteDialect), run)
    },
  },
  LEAN_INGEST,
  {
    version: 12,
    name: 'conversations per hour of their start, NotHandled phrases per day (derived from the conversations and the phrase hours)',
    apply(db, _keep, run) {
      db.exec(conversationStartsDdl(sqliteDialect) + phraseDaysDdl(sqliteDialect))
      runSteps(rebuildConversationStarts(sqliteDialect), run)
      runSteps(rebuildPhraseDays(sqliteDialect), run)
    },
  },
  ZONES_ON_DEMAND,
  FUNNEL_SPANS,
  {
    version: 15,
    name: 'users first and last seen per hour (derived from the user profiles)',
    apply(db, _keep, run) {
      db.exec(readSummariesDdl(sqliteDialect))
      runSteps(rebuildUserSeen(sqliteDialect), run)
    },
  },
  {
    version: 16,
    name: "users per local day and their previous active day (derived from the users' day periods)",
    apply(db, _keep, run) {
      db.exec(retentionDdl(sqliteDialect))
      runSteps(rebuildPrevDays(sqliteDialect), run)
    },
  },
  {
    version: 17,
    name: "funnel step spans: the index on (step, first time) holds the last time too (the all-time funnel's next steps read no table page)",
    apply(db) {
      db.exec(spansIndexDdl(sqliteDialect))
    },
  },
  {
    version: 18,
    name: "each user's UTC days with the active day before and after (derived from the users' day periods)",
    apply(db, _keep, run) {
      db.exec(retentionDdl(sqliteDialect))
      runSteps(rebuildDayLinks(sqliteDialect), run)
    },
  },
  {
    version: 19,
    name: "the day links' indexes by next and by previous active day (the overview's partial days read a third of a day's users)",
    apply(db) {
      db.exec(rollupDdl(sqliteDialect, [DAY_LINKS]))
    },
  },
  {
    version: 20,
    name: 'search: the full-text index keyed by time, with the bots (a page reads the newest matches first)',
    apply(db) {
      db.exec(SQLITE_SEARCH_BY_TIME_DDL)
    },
  },
  {
    version: 21,
    name: "funnel step spans: the index on (step, bot, user) with the first and last time, in place of (step, first time) (each next step's users sought in user order)",
    apply(db) {
      db.exec(spansIndexDdl(sqliteDialect))
    },
  },
  {
    version: 22,
    name: "NotHandled inputs per hour, every phrase together (the overview's count; derived from the phrase hours)",
    apply(db, _keep, run) {
      db.exec(nhHoursDdl(sqliteDialect))
      runSteps(rebuildNhHours(sqliteDialect), run)
    },
  },
  {
    version: 23,
    name: "sessions handed off per hour of their start (the overview's handoffs), operator actions by user (derived from the audit log and the sessions)",
    apply(db, keep, run) {
      addColumn(db, keep, 'sessions', 'handoff', 'INTEGER DEFAULT 0')
      db.exec(handoffDdl(sqliteDialect))
      // The gap the sessions' own step joined them with (a changed gap applies to what comes after).
      runSteps(rebuildHandoffs(sqliteDialect, DEFAULT_SESSION_GAP_MS), run)
    },
  },
  {
    version: 24,
    name: "feedback per hour (every intent) and per UTC day and rated intent (the overview's feedback; derived from the feedback hours)",
    apply(db, _keep, run) {
      db.exec(rollupDdl(sqliteDialect, [FEEDBACK_HOURS, FEEDBACK_DAYS]))
      runSteps(rebuildFeedbackTotals(sqliteDialect), run)
    },
  },
  {
    version: 25,
    name: "intents and events per UTC day (the intents and events reports read a range's whole days there; derived from the hour rows)",
    apply(db, _keep, run) {
      db.exec(rollupDdl(sqliteDialect, [INTENT_DAYS, EVENT_DAYS]))
      runSteps(rebuildDayRollups(sqliteDialect), run)
    },
  },
]

/** Applies the steps the file does not have yet, each in a transaction; returns the versions applied. */
export function migrateSqlite(
  db: Database.Database,
  keep: Keep,
  run: Run,
  migrations: readonly SqliteMigration[] = SQLITE_MIGRATIONS,
): number[] {
  const current = Number(keep(db.prepare('PRAGMA user_version')).pluck().get())
  const applied: number[] = []
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    if (m.version <= current) continue
    db.transaction(() => {
      m.apply(db, keep, run)
      db.exec(`PRAGMA user_version = ${m.version}`)
    }).immediate()
    applied.push(m.version)
  }
  return applied
}
