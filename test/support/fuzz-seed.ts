/**
 * The seed of every property-based test (fast-check): `FUZZ_SEED` when set, else a fixed default,
 * so a run draws the same inputs on every machine and a failure is a defect that reproduces, not
 * a draw that shows up once under load. A failure prints the seed, the counterexample's path and
 * the command that replays it:
 *
 *   FUZZ_SEED=26 npx vitest run test/fuzz/kik.fuzz.test.ts -t "answers like the untracked bot"
 *   FUZZ_SEED=26 FUZZ_PATH="3:1:0" npx vitest run …   (only the shrunk counterexample)
 *
 * Another seed explores other inputs (`FUZZ_SEED=$RANDOM`); the number of runs stays each test's own.
 */
import { relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import fc from 'fast-check'
import { expect } from 'vitest'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** The default seed (issue 26's hostile-records suite used it first). */
const DEFAULT_SEED = 26

function envSeed(): number {
  const raw = process.env.FUZZ_SEED
  if (raw === undefined || raw.trim() === '') return DEFAULT_SEED
  const seed = Number(raw)
  if (!Number.isSafeInteger(seed))
    throw new Error(`FUZZ_SEED must be an integer (fast-check's seed), got ${JSON.stringify(raw)}`)
  return seed
}

/** The seed every `fc.assert` runs with (see the file's comment). */
export const FUZZ_SEED = envSeed()

/** `FUZZ_PATH`: replay one counterexample (the path a failure printed) instead of the whole run. */
const FUZZ_PATH = process.env.FUZZ_PATH?.trim() || undefined

/** The command that replays a failure of the running test. */
function reproduceLine(seed: number, path: string | null | undefined): string {
  const state = expect.getState()
  const file = state.testPath ? relative(ROOT, state.testPath) : '<test file>'
  // -t takes a regular expression: the test's own name, escaped, in single quotes for the shell.
  const test = state.currentTestName?.split(' > ').at(-1)
  const name = test ? ` -t '${test.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replaceAll("'", "'\\''")}'` : ''
  const replay = path
    ? ` (only the counterexample: FUZZ_SEED=${seed} FUZZ_PATH="${path}" npx vitest run ${file}${name})`
    : ''
  return `reproduce: FUZZ_SEED=${seed} npx vitest run ${file}${name}${replay}`
}

/**
 * A property's parameters with the seed (and `FUZZ_PATH` replay) filled in, and a report that
 * names the seed, path and command on failure. Pass every `fc.assert` its parameters through it:
 * `fc.assert(property, seeded({ numRuns: RUNS }))`.
 */
export function seeded<Ts>(
  params: Omit<fc.Parameters<NoInfer<Ts>>, 'seed' | 'path' | 'reporter' | 'asyncReporter'> = {},
): fc.Parameters<Ts> {
  return {
    ...params,
    seed: FUZZ_SEED,
    ...(FUZZ_PATH ? { path: FUZZ_PATH, endOnFailure: true } : {}),
    reporter(out) {
      if (!out.failed) return
      throw new Error(`${fc.defaultReportMessage(out)}\n${reproduceLine(out.seed, out.counterexamplePath)}`, {
        cause: out.errorInstance,
      })
    },
  }
}
