import { packageBuild } from '../../tsup.preset'

export default packageBuild({
  entry: ['src/index.ts', 'src/cli.ts'],
  // import.meta.url in the CJS build (the dashboard's public/ folder is found next to dist/).
  shims: true,
})
