import { packageBuild } from '../../tsup.preset'

// Two entries: the user's API, and `@convotrack/core/adapter` for framework adapters.
export default packageBuild({ entry: ['src/index.ts', 'src/adapter.ts'] })
