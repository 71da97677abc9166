// one-off scaffold helper (not shipped): writes packages/<name>/package.json + tsup config
import { mkdirSync, writeFileSync, existsSync } from 'node:fs'
const pkgs = {
  core: { description: 'Conversation analytics for chatbots and voice apps: tracker, wire serializers, reliable transport, pause state', dependencies: { undici: '^7.30.2' } },
  alexa: { description: 'convotrack for Alexa skills: ask-sdk-core interceptors, Lambda handler wrapper, CloudWatch log forwarder', dependencies: { '@convotrack/core': 'workspace:^' }, peerDependencies: { 'ask-sdk-core': '^2.14.0' }, peerDependenciesMeta: { 'ask-sdk-core': { optional: true } }, devDependencies: { 'ask-sdk-core': '2.14.0', 'ask-sdk-model': '1.86.0' } },
  slack: { description: 'convotrack for Slack Bolt apps: one global middleware tracks incoming and outgoing messages, with pause', dependencies: { '@convotrack/core': 'workspace:^' }, peerDependencies: { '@slack/bolt': '>=3.0.0' }, devDependencies: { '@slack/bolt': '5.1.0', '@slack/web-api': '*' } },
  messenger: { description: 'convotrack for Facebook Messenger bots: webhook middleware, tracked Send API, botbuilder middleware, with pause', dependencies: { '@convotrack/core': 'workspace:^' }, peerDependencies: { botbuilder: '^4.0.0', express: '>=4.0.0' }, peerDependenciesMeta: { botbuilder: { optional: true }, express: { optional: true } }, devDependencies: { botbuilder: '4.23.3', express: '5.3.0', '@types/express': '5.0.6' } },
  kik: { description: 'convotrack for Kik bots: configHandler and logHandler hooks, with pause', dependencies: { '@convotrack/core': 'workspace:^' }, peerDependencies: { '@kikinteractive/kik': '^2.0.0' }, peerDependenciesMeta: { '@kikinteractive/kik': { optional: true } }, devDependencies: { '@kikinteractive/kik': '2.2.1', express: '5.3.0' } },
  express: { description: 'convotrack pause-webhook receiver for Express: Standard Webhooks signature check on raw bytes, pause store update', dependencies: { '@convotrack/core': 'workspace:^' }, peerDependencies: { express: '>=4.0.0' }, devDependencies: { express: '5.3.0', '@types/express': '5.0.6', ioredis: '6.0.0', '@convotrack/redis': 'workspace:^' } },
  redis: { description: 'convotrack RedisPauseStore: pause state shared by every instance of a bot', dependencies: { '@convotrack/core': 'workspace:^' }, peerDependencies: { ioredis: '>=5.0.0' }, devDependencies: { ioredis: '6.0.0' } },
  import: { description: 'convotrack import: backfill third-party conversation history (JSONL/CSV) as universal records, with progress and resume', dependencies: { '@convotrack/core': 'workspace:^', 'csv-parse': '^6.1.0' }, bin: { convotrack: './dist/cli.js' } },
  collector: { description: 'The local convotrack tracking service: POST /track with full validation, SQLite storage, dashboard and live takeover', dependencies: { '@convotrack/core': 'workspace:^', express: '^5.3.0', 'better-sqlite3': '12.11.1' }, devDependencies: { '@types/express': '5.0.6', '@types/better-sqlite3': '7.6.13', '@convotrack/express': 'workspace:^' }, bin: { 'convotrack-collector': './dist/cli.js' } },
}
for (const [name, p] of Object.entries(pkgs)) {
  const dir = `packages/${name}`
  mkdirSync(`${dir}/src`, { recursive: true }); mkdirSync(`${dir}/test`, { recursive: true })
  const entries = p.bin ? ['src/index.ts', 'src/cli.ts'] : ['src/index.ts']
  const json = {
    name: `@convotrack/${name}`, version: '0.1.0', description: p.description, license: 'MIT',
    type: 'module', sideEffects: false,
    repository: { type: 'git', url: 'git+https://example.invalid/convotrack.git', directory: dir },
    engines: { node: '>=20' },
    main: './dist/index.cjs', module: './dist/index.js', types: './dist/index.d.cts',
    exports: { '.': { import: { types: './dist/index.d.ts', default: './dist/index.js' }, require: { types: './dist/index.d.cts', default: './dist/index.cjs' } }, './package.json': './package.json' },
    ...(p.bin ? { bin: p.bin } : {}),
    files: ['dist', 'README.md', ...(name === 'collector' ? ['public'] : [])],
    scripts: { build: 'tsup', typecheck: 'tsc -p ../../tsconfig.json --noEmit', test: 'vitest run --root ../.. --project ' + name },
    ...(p.dependencies ? { dependencies: p.dependencies } : {}),
    ...(p.peerDependencies ? { peerDependencies: p.peerDependencies } : {}),
    ...(p.peerDependenciesMeta ? { peerDependenciesMeta: p.peerDependenciesMeta } : {}),
    ...(p.devDependencies ? { devDependencies: p.devDependencies } : {}),
    publishConfig: { access: 'public' },
  }
  writeFileSync(`${dir}/package.json`, JSON.stringify(json, null, 2) + '\n')
  writeFileSync(`${dir}/tsup.config.ts`, `import { defineConfig } from 'tsup'

export default defineConfig({
  entry: ${JSON.stringify(entries)},
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
  tsconfig: '../../tsconfig.build.json',
})
`)
  if (!existsSync(`${dir}/src/index.ts`)) writeFileSync(`${dir}/src/index.ts`, 'export {}\n')
  if (p.bin && !existsSync(`${dir}/src/cli.ts`)) writeFileSync(`${dir}/src/cli.ts`, '#!/usr/bin/env node\nexport {}\n')
}
