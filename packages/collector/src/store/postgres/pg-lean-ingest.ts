/**
 * PostgreSQL step 13 (issue 27, ingest keeps up): less written per stored message.
 *
 * - The foreign key from a message to its record goes. Its check ran per message row (a look-up
 *   and a row lock on the record the same statement had just inserted); the store inserts a
 *   record and its messages in one transaction and deletes messages before their records, as
 *   SQLite's file (which never enforced it) always did.
 * - The users per day and per hour are keyed by time first (day or hour, bot, user), the order
 *   their reads take ranges in: the secondary index that kept that order beside the key
 *   (bot, day or hour, user) was a second copy of every row's key, written with each new row.
 */

import { USER_HOURS } from '../../reports/analytics-tables'
import { postgresDialect as d } from '../../reports/dialect'
import { USER_DAYS } from '../../reports/rollup-tables'

/** Re-keys a users-per-period table in its spec's key order and drops the old copy index. */
function rekey(name: string, keys: readonly string[], oldIndex: string): string {
  const t = d.table(name)
  return `ALTER TABLE ${t} DROP CONSTRAINT IF EXISTS ${t}_pkey;
DROP INDEX IF EXISTS ${t}_${oldIndex};
ALTER TABLE ${t} ADD PRIMARY KEY (${keys.join(', ')});`
}

export const LEAN_INGEST: { version: number; name: string; sql: string } = {
  version: 13,
  name: 'ingest: no foreign-key check per message; users per day and hour keyed by time first (one index fewer each)',
  sql: `
ALTER TABLE ${d.table('messages')} DROP CONSTRAINT IF EXISTS ${d.table('messages')}_record_id_fkey;
${rekey(USER_DAYS.name, USER_DAYS.keys, 'day_bot_user_id')}
${rekey(USER_HOURS.name, USER_HOURS.keys, 'hour_bot_user_id')}
`,
}
