import { packageBuild } from '../../tsup.preset'

export default packageBuild({ entry: ['src/index.ts', 'src/cli.ts'] })
