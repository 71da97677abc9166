/**
 * PostgreSQL's autovacuum for the collector's tables: run after 1 % of a table's rows changed, was
 * added or went, instead of the server's default 20 % (PostgreSQL migration 29).
 *
 * Why: the reports read their summaries from indexes alone (index-only scans: the day links of the
 * overview's partial days, the users per day and hour, the funnel's steps; search's newest
 * messages by time), and an index entry on a page the last vacuum has not seen is checked in the
 * table — a read from the heap for each. With the default, a table of 5 million rows is vacuumed
 * after a million changes or new rows: weeks of a live bot's newest rows (what the default ranges
 * read) or an import of history were read through the heap until then. Measured on the 10 M bench
 * store after 150 000 ratings were imported across its 90 days: the partial-day users of a past
 * range took 40 ms with 2 600 heap fetches (204 000 row versions not vacuumed in the day links),
 * 5.5 ms after a vacuum. A vacuum after 1 % reads only the pages changed since the last one.
 */

/** The storage parameters set on every `convotrack_` table: autovacuum and its statistics after 1 % of the rows. */
export const AUTOVACUUM_SCALE_FACTOR = 0.01

/**
 * A `DO` block that sets the parameters on every table of the current schema named `convotrack_…`
 * (the insert threshold from PostgreSQL 13, the first that has it). Idempotent; a later migration
 * that creates a table runs it again.
 */
export const PG_AUTOVACUUM_DDL = `DO $$
DECLARE
  t regclass;
  opts text := 'autovacuum_vacuum_scale_factor = ${AUTOVACUUM_SCALE_FACTOR}, autovacuum_analyze_scale_factor = ${AUTOVACUUM_SCALE_FACTOR}'
    || CASE WHEN current_setting('server_version_num')::int >= 130000
      THEN ', autovacuum_vacuum_insert_scale_factor = ${AUTOVACUUM_SCALE_FACTOR}' ELSE '' END;
BEGIN
  FOR t IN SELECT c.oid::regclass FROM pg_class c
    WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace AND c.relname LIKE 'convotrack\\_%'
  LOOP
    EXECUTE format('ALTER TABLE %s SET (%s)', t, opts);
  END LOOP;
END $$;`
