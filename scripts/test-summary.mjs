// Prints vitest's result as the plain closing line CI reads: "N passed, N failed[, N skipped]".
//   node scripts/test-summary.mjs                   → test-results.json + one file per Node line
//                                                     of scripts/node-matrix.json
//   node scripts/test-summary.mjs [label=]file …    → those runs
// With several runs, one line per run first ("  node v22.23.3: 590 passed, 0 failed"), then the
// sum as the last line: a failure on any Node line is a failure. A run whose JSON is missing
// (it crashed, or never started) counts as one failure; so does a test file that failed to load.
import { existsSync, readFileSync } from 'node:fs'
import { relative } from 'node:path'

const matrix = JSON.parse(readFileSync(new URL('./node-matrix.json', import.meta.url), 'utf8'))
const args = process.argv.slice(2)
const runs = (
  args.length > 0
    ? args
    : [
        `node ${process.version}=test-results.json`,
        ...matrix.lines.map((v) => `node v${v}=test-results-node-v${v}.json`),
      ]
).map((a) => {
  const at = a.lastIndexOf('=')
  return at < 0 ? { label: a, file: a } : { label: a.slice(0, at), file: a.slice(at + 1) }
})

// Each failure by name first (a CI log may keep only its last lines): the run, the file, the
// test, and the first lines of its message.
for (const { label, file } of runs) {
  if (!existsSync(file)) continue
  for (const f of JSON.parse(readFileSync(file, 'utf8')).testResults ?? []) {
    const failedTests = (f.assertionResults ?? []).filter((a) => a.status === 'failed')
    const name = relative(process.cwd(), f.name)
    if (f.status === 'failed' && failedTests.length === 0)
      console.log(`FAILED ${label} ${name} (the file failed to run)\n${excerpt(f.message)}`)
    for (const a of failedTests)
      console.log(`FAILED ${label} ${name} > ${a.fullName}\n${excerpt(a.failureMessages?.[0])}`)
  }
}

const total = { passed: 0, failed: 0, skipped: 0 }
const line = (c) => `${c.passed} passed, ${c.failed} failed${c.skipped ? `, ${c.skipped} skipped` : ''}`
for (const { label, file } of runs) {
  const c = count(file)
  total.passed += c.passed
  total.failed += c.failed
  total.skipped += c.skipped
  if (runs.length > 1)
    console.log(`  ${label}: ${line(c)}${existsSync(file) ? '' : ` (${file} missing: the run did not finish)`}`)
}
console.log(line(total))

function count(file) {
  if (!existsSync(file)) return { passed: 0, failed: 1, skipped: 0 }
  const r = JSON.parse(readFileSync(file, 'utf8'))
  const brokenFiles = (r.testResults ?? []).filter(
    (f) => f.status === 'failed' && !(f.assertionResults ?? []).some((a) => a.status === 'failed'),
  ).length
  return {
    passed: r.numPassedTests,
    failed: r.numFailedTests + brokenFiles,
    skipped: (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0),
  }
}

function excerpt(message) {
  const lines = String(message ?? '')
    .split('\n')
    .filter((l) => !/^\s+at /.test(l))
    .slice(0, 8)
  return lines.map((l) => `    ${l.slice(0, 400)}`).join('\n')
}
