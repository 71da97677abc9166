import { defineConfig } from 'tsup'

export default defineConfig({
  entry: ['src/index.ts', 'src/cli.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  // import.meta.url in the CJS build (the dashboard's public/ folder is found next to dist/).
  shims: true,
  target: 'node20',
  tsconfig: '../../tsconfig.build.json',
})
