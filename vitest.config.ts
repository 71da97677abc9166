import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { configDefaults, defineConfig } from 'vitest/config'

const names = ['core', 'alexa', 'slack', 'messenger', 'kik', 'express', 'redis', 'otel', 'import', 'collector']
// Tests import the packages by their public names; resolve those to source so a test run
// needs no build step (test/consumer packs and installs the built output).
const alias = Object.fromEntries([
  // Sub-path entries first: an alias also matches `name/…`.
  ['@convotrack/core/adapter', fileURLToPath(new URL('./packages/core/src/adapter.ts', import.meta.url))],
  ...names.map((n) => [`@convotrack/${n}`, fileURLToPath(new URL(`./packages/${n}/src/index.ts`, import.meta.url))]),
])

// On the other Node lines (scripts/test-node-lines.sh sets CONVOTRACK_NODE_LINE) the suites listed
// in scripts/node-matrix.json (real browser, resilience, fuzz, volume, README type-check) are left to
// the system Node. (vitest's CLI --exclude does not reach into `projects`.)
const matrix = JSON.parse(readFileSync(new URL('./scripts/node-matrix.json', import.meta.url), 'utf8')) as {
  systemNodeOnly: string[]
  handedToLines: Record<string, string[]>
}
const line = process.env.CONVOTRACK_NODE_LINE
// A few system-Node-only suites run on a middle line instead, when verify runs that line beside
// the system Node's run (scripts/verify.sh sets CONVOTRACK_LINES_BESIDE to the lines it runs):
// node-matrix.json's "handedToLines". Run alone, the system Node runs them as before.
const handedHere = line ? (matrix.handedToLines[line] ?? []) : []
const handedAway = line
  ? []
  : (process.env.CONVOTRACK_LINES_BESIDE ?? '').split(/\s+/).flatMap((v) => matrix.handedToLines[v] ?? [])
const lineExclude = line ? matrix.systemNodeOnly : handedAway
const exclude = (...globs: string[]) => [...configDefaults.exclude, ...lineExclude, ...globs]
// The test files that mock modules (vi.mock): a project of their own, isolated (the others share a
// worker's module cache, where a mock would leak into the files after them).
export const mockModules = ['test/security/pause-webhook.test.ts']
// Hang detectors, not speed limits: no test asserts on time, and on a loaded 2-core machine
// (verify runs the Node lines side by side) a suite that takes 5 s idle can take ten times that.
const testTimeout = 120_000
const hookTimeout = 120_000

export default defineConfig({
  resolve: { alias },
  test: {
    // Transformed modules kept on disk (node_modules/.experimental-vitest-cache, written atomically,
    // keyed by each file's content): verify's four vitest runs (one per Node line) and every rerun
    // transform each file once. `vitest --clearCache` empties it.
    experimental: { fsModuleCache: true },
    projects: [
      ...names.map((name) => ({
        resolve: { alias },
        test: {
          name,
          include: [`packages/${name}/test/**/*.test.ts`],
          exclude: exclude(),
          testTimeout,
          hookTimeout,
          // The packages' files share a worker's module cache (vitest's `isolate: false`): each
          // file re-importing the package sources, express, undici and pg in a fresh worker was a
          // quarter of CI's test time. They hold no module mocks (vi.mock) and restore what they
          // change on the process (timers, env, listeners) in their own hooks. The files that
          // mock modules (mockModules) and the compat projects stay isolated.
          isolate: false,
        },
      })),
      {
        resolve: { alias },
        test: {
          name: 'examples',
          include: ['examples/*/test/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: exclude(
            'test/consumer/**',
            'test/readme/**',
            'test/dashbot-compat/**',
            'test/openllmetry-compat/**',
            ...mockModules,
          ),
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // As the packages' (above): a worker's module cache is shared, ~20 % of this project's CPU.
          isolate: false,
        },
      },
      {
        // The files under test/ that mock modules (vi.mock): each in a fresh module cache.
        resolve: { alias },
        test: {
          name: 'mocks',
          include: mockModules,
          exclude: exclude(),
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      // The suites handed to this line (above): exclude lists win over include lists, so they are a
      // project of their own (scripts/test-node-lines.sh adds it to a reduced line's projects).
      ...(handedHere.length
        ? [
            {
              resolve: { alias },
              test: { name: 'handed', include: handedHere, testTimeout, hookTimeout },
            },
          ]
        : []),
      {
        // The published dashbot SDK (a devDependency of test/dashbot-compat only) into the collector.
        resolve: { alias },
        test: {
          name: 'dashbot-compat',
          include: ['test/dashbot-compat/test/**/*.test.ts'],
          exclude: exclude(),
          testTimeout,
          hookTimeout,
        },
      },
      {
        // OpenLLMetry's SDK (a devDependency of test/openllmetry-compat only) into POST /v1/traces.
        resolve: { alias },
        test: {
          name: 'openllmetry-compat',
          include: ['test/openllmetry-compat/test/**/*.test.ts'],
          exclude: exclude(),
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        // Use the built packages (packed and installed; README snippets type-checked against
        // dist): run after `pnpm build` (pnpm verify does).
        test: {
          name: 'consumer',
          include: ['test/consumer/**/*.test.ts', 'test/readme/**/*.test.ts'],
          exclude: exclude(),
          testTimeout: 120_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
})
