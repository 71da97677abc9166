// Prints vitest's result as the plain closing line CI reads: "N passed, N failed[, N skipped]".
//   node scripts/test-summary.mjs                   → test-results.json + one file per Node line
//                                                     of scripts/node-matrix.json
//   node scripts/test-summary.mjs [label=]file …    → those runs
//   node scripts/test-summary.mjs --failed-files F  → the test files of F with a failure, one per line
//   --check (with the first two)                    → exits 1 when any test failed
// With several runs, one line per run first ("  node v22.23.3: 590 passed, 0 failed"), then the
// sum as the last line: a failure on any Node line is a failure. A run whose JSON is missing
// (it crashed, or never started) counts as one failure; so does a test file that failed to load.
// Every failure is printed by name before the counts (a CI log may keep only its last lines).
//
// Reruns: when `X-rerun.json` sits beside a run's `X.json` (scripts/verify.sh runs the files that
// failed once more), a test that failed in X and passed in the rerun counts as passed and is
// printed as FLAKY, by name, so it is seen and fixed; one that failed again stays failed.
import { existsSync, readFileSync } from 'node:fs'
import { relative } from 'node:path'

const matrix = JSON.parse(readFileSync(new URL('./node-matrix.json', import.meta.url), 'utf8'))
let args = process.argv.slice(2)
const check = args.includes('--check')
args = args.filter((a) => a !== '--check')

if (args[0] === '--failed-files') {
  const r = read(args[1])
  for (const f of r?.testResults ?? []) if (fileFailed(f)) console.log(relative(process.cwd(), f.name))
  process.exit(0)
}

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

const total = { passed: 0, failed: 0, skipped: 0 }
const counts = runs.map(({ label, file }) => {
  const c = count(label, file)
  total.passed += c.passed
  total.failed += c.failed
  total.skipped += c.skipped
  return c
})
const line = (c) => `${c.passed} passed, ${c.failed} failed${c.skipped ? `, ${c.skipped} skipped` : ''}`
if (runs.length > 1)
  for (const [i, { label, file }] of runs.entries())
    console.log(`  ${label}: ${line(counts[i])}${existsSync(file) ? '' : ` (${file} missing: the run did not finish)`}`)
console.log(line(total))
if (check && total.failed > 0) process.exit(1)

/** Counts one run (with its rerun, if any), printing each failure and each flaky test. */
function count(label, file) {
  const r = read(file)
  if (!r) return { passed: 0, failed: 1, skipped: 0 }
  const rerun = read(file.replace(/\.json$/, '-rerun.json'))
  const again = new Map((rerun?.testResults ?? []).map((f) => [f.name, f]))
  const c = {
    passed: r.numPassedTests,
    failed: 0,
    skipped: (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0),
  }
  for (const f of r.testResults ?? []) {
    if (!fileFailed(f)) continue
    const name = relative(process.cwd(), f.name)
    const f2 = again.get(f.name)
    const failedTests = (f.assertionResults ?? []).filter((a) => a.status === 'failed')
    if (failedTests.length === 0) {
      // The file failed to run (or failed outside any test).
      if (f2 && !fileFailed(f2)) {
        const passedAgain = (f2.assertionResults ?? []).filter((a) => a.status === 'passed').length
        c.passed += passedAgain
        console.log(
          `FLAKY ${label} ${name} (the file failed to run; on the rerun ${passedAgain} passed)\n${excerpt(f.message)}`,
        )
      } else {
        c.failed++
        console.log(`FAILED ${label} ${name} (the file failed to run)\n${excerpt(f2?.message ?? f.message)}`)
      }
      continue
    }
    for (const a of failedTests) {
      const a2 = f2?.assertionResults?.find((x) => x.fullName === a.fullName)
      if (a2?.status === 'passed') {
        c.passed++
        console.log(
          `FLAKY ${label} ${name} > ${a.fullName} (failed, then passed on the rerun)\n${excerpt(a.failureMessages?.[0])}`,
        )
      } else {
        c.failed++
        console.log(
          `FAILED ${label} ${name} > ${a.fullName}${f2 ? ' (and again on the rerun)' : ''}\n${excerpt(a.failureMessages?.[0])}`,
        )
      }
    }
  }
  return c
}

function fileFailed(f) {
  return f.status === 'failed' || (f.assertionResults ?? []).some((a) => a.status === 'failed')
}

function read(file) {
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined
}

function excerpt(message) {
  const lines = String(message ?? '')
    .split('\n')
    .filter((l) => !/^\s+at /.test(l))
    .slice(0, 8)
  return lines.map((l) => `    ${l.slice(0, 400)}`).join('\n')
}
