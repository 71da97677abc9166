import { defineConfig, type Options } from 'tsup'

/**
 * The build every package shares: ESM + CJS with types and source maps for Node 20, compiled
 * with tsconfig.build.json. A package's tsup.config.ts passes only what differs (its entries).
 *
 * @example export default packageBuild({ entry: ['src/index.ts', 'src/cli.ts'] })
 */
export function packageBuild(overrides: Options = {}): ReturnType<typeof defineConfig> {
  return defineConfig({
    entry: ['src/index.ts'],
    format: ['esm', 'cjs'],
    dts: true,
    clean: true,
    sourcemap: true,
    target: 'node20',
    tsconfig: '../../tsconfig.build.json',
    ...overrides,
  })
}
