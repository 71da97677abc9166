/**
 * A test's own better-sqlite3 database, kept reachable like the store's.
 *
 * better-sqlite3 12 built against Node ≥ 24.19 headers aborts the process (`Assertion failed:
 * (env) != nullptr` in `RemoveEnvironmentCleanupHook`, from `~ObjectWrap`) whenever V8 collects
 * one of its objects (Database, Statement) in a garbage collection started by one of V8's own
 * tasks (incremental marking, idle time) instead of by JavaScript: at any moment of a run, not only
 * at exit, and more often the busier the machine (a Node bug: the 24.x backport of ObjectWrap's
 * cleanup hooks). search-page.test.ts dropped a statement per query and killed its vitest worker
 * on the Node 24 line ("Worker exited unexpectedly"). The store keeps its objects reachable
 * (`kept` in src/store/sqlite/sqlite-store.ts); a test opens its own database here, which does
 * the same for the database and every statement prepared on it.
 */
import Database from 'better-sqlite3'

const keptAlive = new Set<object>()

/**
 * `new Database(file, options)`, kept with every statement it prepares until the worker exits.
 * better-sqlite3's own `pragma()` prepares inside the addon, out of reach: here it goes through
 * `prepare` (same answers: `simple` gives the first column of the first row, else every row).
 *
 * @example const db = openKeptSqlite(file, { readonly: true })
 */
export function openKeptSqlite(file: string, options?: Database.Options): Database.Database {
  const db = new Database(file, options)
  keptAlive.add(db)
  const prepare = db.prepare.bind(db)
  db.prepare = ((source: string) => {
    const statement = prepare(source)
    keptAlive.add(statement)
    return statement
  }) as Database.Database['prepare']
  db.pragma = ((source: string, options?: Database.PragmaOptions) => {
    const statement = db.prepare(`PRAGMA ${source}`)
    if (!statement.reader) {
      statement.run() // a PRAGMA that sets a value answers no rows
      return []
    }
    return options?.simple ? statement.pluck().get() : statement.all()
  }) as Database.Database['pragma']
  return db
}
