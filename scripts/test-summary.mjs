// Prints vitest's result as the plain closing line CI reads: "N passed, N failed[, N skipped]".
// A test file that failed to load has no failed test in it: it counts as one failure.
import { existsSync, readFileSync } from 'node:fs'

const file = process.argv[2] ?? 'test-results.json'
if (!existsSync(file)) {
  console.log('0 passed, 1 failed')
  process.exit(0)
}
const r = JSON.parse(readFileSync(file, 'utf8'))
const brokenFiles = (r.testResults ?? []).filter(
  (f) => f.status === 'failed' && !(f.assertionResults ?? []).some((a) => a.status === 'failed'),
).length
const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0)
console.log(
  `${r.numPassedTests} passed, ${r.numFailedTests + brokenFiles} failed${skipped ? `, ${skipped} skipped` : ''}`,
)
