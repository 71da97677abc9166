/**
 * The ingest floor: a node flag for a bench process (the collector children through
 * BENCH_COLLECTOR_ARGS, or an in-process bench) that stores records WITHOUT maintaining the
 * summaries — the messages and records rows, their indexes, full-text, idempotency keys, and
 * nothing else. It measures what ingest costs before any report's share: the part no summary
 * design can take away. Bench only; the collector itself has no such switch.
 *
 *   BENCH_COLLECTOR_ARGS="--import ./bench/support/summaries-off.mjs" pnpm bench:scale -- …
 *   node --import tsx --import ./bench/support/summaries-off.mjs bench/ingest-ab.ts --base FILE --floor
 *
 * `globalThis.convotrackSummariesOff = false` turns the summaries back on in that process (an
 * in-process A/B of both). The source of `src/reports/summary-writes.ts` is changed as it loads,
 * whether tsx compiles it for `require` (Module.prototype._compile) or for `import` (a load hook).
 */
import Module, { register } from 'node:module'

const FILE = /[\\/]reports[\\/]summary-writes\.[cm]?[jt]s$/

function off(source, where) {
  const changed = String(source).replace(
    /(function\*\s*ingestSummaries\s*\([^)]*\)\s*\{)/,
    '$1 if (globalThis.convotrackSummariesOff !== false) return;',
  )
  if (changed === String(source)) throw new Error(`summaries-off: no ingestSummaries in ${where}`)
  return changed
}

/** Benches that need this flag check it is there. */
globalThis.convotrackSummariesHook = true

const compile = Module.prototype._compile
Module.prototype._compile = function (content, filename) {
  return compile.call(this, FILE.test(filename) ? off(content, filename) : content, filename)
}

register(
  `data:text/javascript,${encodeURIComponent(`
const FILE = ${FILE}
export async function load(url, context, nextLoad) {
  const loaded = await nextLoad(url, context)
  if (!url.startsWith('file:') || !FILE.test(new URL(url).pathname) || loaded.source == null) return loaded
  const changed = String(loaded.source).replace(${/(function\*\s*ingestSummaries\s*\([^)]*\)\s*\{)/}, '$1 if (globalThis.convotrackSummariesOff !== false) return;')
  if (changed === String(loaded.source)) throw new Error('summaries-off: no ingestSummaries in ' + url)
  return { ...loaded, source: changed }
}`)}`,
)
