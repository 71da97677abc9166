import { packageBuild } from '../../tsup.preset'

export default packageBuild({
  // The Kik SDK ships no types: ours (kik-sdk.d.ts, published beside dist/) come with the
  // package's, so a bot's `import Bot from '@kikinteractive/kik'` compiles under `strict`.
  dts: { banner: '/// <reference path="../kik-sdk.d.ts" />' },
})
