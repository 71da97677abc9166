/**
 * The way a new user gets convotrack: every package packed as it would be published
 * (`pnpm pack`: workspace ranges become real versions), the tarballs installed with npm into
 * a fresh project outside the workspace, then one ESM bot and one CommonJS bot run against a
 * local tracking server. Needs the packages built (`pnpm build`, as `pnpm verify` does first).
 */
import { execFile, execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { workspacePackages as packages, packWorkspace } from '../support/packed'
import { type Sink, startSink } from '../support/sink-server'

// The bots run as child processes while this process serves the sink: never block its event loop.
const run = async (file: string) =>
  JSON.parse(
    (await promisify(execFile)(process.execPath, [file], { cwd: dir, env: { ...process.env, SINK: sink.url } })).stdout,
  )

let dir: string
let sink: Sink

beforeAll(async () => {
  sink = await startSink()
  dir = mkdtempSync(join(tmpdir(), 'convotrack-consumer-'))
  const tarballs = join(dir, 'tarballs')
  mkdirSync(tarballs)
  const deps = Object.fromEntries(
    Object.entries(packWorkspace(tarballs)).map(([p, tgz]) => [`@convotrack/${p}`, `file:tarballs/${basename(tgz)}`]),
  )
  expect(Object.keys(deps).length).toBe(packages.length)
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, dependencies: { ...deps, express: '5.3.0' } }, null, 2),
  )
  // --ignore-scripts: the collector's native SQLite build is not what this test is about;
  // --legacy-peer-deps: a user installs the frameworks they use, not every adapter's peer.
  execFileSync(
    'npm',
    ['install', '--ignore-scripts', '--legacy-peer-deps', '--no-audit', '--no-fund', '--loglevel=error'],
    {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, npm_config_nodedir: '/usr' },
    },
  )
}, 240_000)

afterAll(async () => {
  await sink?.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

describe('installed from tarballs, outside the workspace', () => {
  it('no workspace: ranges are left in the published manifests', () => {
    for (const p of packages) {
      const manifest = readFileSync(join(dir, 'node_modules', '@convotrack', p, 'package.json'), 'utf8')
      expect(manifest).not.toContain('workspace:')
    }
  })

  it('an ESM bot tracks, receives a signed pause webhook and stops answering', async () => {
    writeFileSync(
      join(dir, 'bot.mjs'),
      `
      import express from 'express'
      import { createTracker, signPauseWebhook, generateWebhookSecret } from '@convotrack/core'
      import { pauseReceiver } from '@convotrack/express'
      const secret = generateWebhookSecret()
      const tracker = createTracker({ apiKey: 'esm-key', baseUrl: process.env.SINK })
      const app = express()
      app.post('/pause', pauseReceiver({ store: tracker.pauses, secret }))
      const server = app.listen(0, '127.0.0.1', async () => {
        const body = JSON.stringify({ userId: 'u1', paused: true })
        const res = await fetch('http://127.0.0.1:' + server.address().port + '/pause', {
          method: 'POST', body, headers: { 'content-type': 'application/json', ...signPauseWebhook({ secret, body }) },
        })
        tracker.universal.logIncoming({ text: 'hello from esm', userId: 'u1' })
        const paused = await tracker.isPaused('u1')
        const result = await tracker.close()
        server.close()
        console.log(JSON.stringify({ status: res.status, paused, result }))
      })
      `,
    )
    const out = await run('bot.mjs')
    expect(out).toEqual({
      status: 200,
      paused: true,
      result: { delivered: true, pending: 0, held: 0, sent: 1, failed: 0, dropped: 0 },
    })
    expect(sink.records.find((r) => r.apiKey === 'esm-key')?.body).toEqual({ text: 'hello from esm', userId: 'u1' })
  })

  it('a CommonJS bot (require) tracks every shape', async () => {
    writeFileSync(
      join(dir, 'bot.cjs'),
      `
      const { createTracker, InvalidRecordError } = require('@convotrack/core')
      const tracker = createTracker({ apiKey: 'cjs-key', baseUrl: process.env.SINK, strict: true })
      tracker.sms.logIncoming({ text: 'hello from cjs', userId: '+15550001' })
      tracker.logEvent({ type: 'revenueEvent', name: 'order', userId: '+15550001', amount: 12.5 })
      let named = ''
      try { tracker.universal.logIncoming({ text: 'x' }) } catch (e) { named = e instanceof InvalidRecordError ? e.path : 'wrong class' }
      const adapters = ['alexa', 'slack', 'messenger', 'kik', 'express', 'redis', 'import', 'collector'].map((p) => [p, Object.keys(require('@convotrack/' + p)).length > 0])
      tracker.close().then((result) => console.log(JSON.stringify({ named, result, adapters: Object.fromEntries(adapters) })))
      `,
    )
    const out = await run('bot.cjs')
    expect(out.named).toBe('userId')
    expect(out.result).toMatchObject({ delivered: true, sent: 2 })
    // Every package loads through require() (adapters with framework peers load without them).
    expect(Object.values(out.adapters).every(Boolean)).toBe(true)
    const mine = sink.records.filter((r) => r.apiKey === 'cjs-key')
    expect(mine.map((r) => `${r.platform}/${r.type}`)).toEqual(['sms/incoming', 'generic/event'])
  })

  it('adapters, the redis store, the importer and otel declare core as a peer: the app holds one copy of core, shared by all', () => {
    for (const p of ['alexa', 'slack', 'messenger', 'kik', 'express', 'redis', 'import', 'otel']) {
      const manifest = JSON.parse(readFileSync(join(dir, 'node_modules', '@convotrack', p, 'package.json'), 'utf8'))
      expect(manifest.dependencies?.['@convotrack/core']).toBeUndefined()
      expect(manifest.peerDependencies?.['@convotrack/core']).toMatch(/^\^\d+\.\d+\.\d+$/)
    }
    // Nothing nested: no adapter brought its own core.
    const copies = execFileSync('find', ['node_modules', '-path', '*/@convotrack/core/package.json'], {
      cwd: dir,
      encoding: 'utf8',
    })
      .trim()
      .split('\n')
    expect(copies).toEqual(['node_modules/@convotrack/core/package.json'])
  })

  it('the collector (a service of its own) keeps core as a regular dependency, deduplicated to the app’s copy', () => {
    for (const p of ['collector']) {
      const manifest = JSON.parse(readFileSync(join(dir, 'node_modules', '@convotrack', p, 'package.json'), 'utf8'))
      expect(manifest.dependencies?.['@convotrack/core']).toMatch(/^\^\d+\.\d+\.\d+$/)
      expect(manifest.peerDependencies?.['@convotrack/core']).toBeUndefined()
      expect(existsSync(join(dir, 'node_modules', '@convotrack', p, 'node_modules', '@convotrack', 'core'))).toBe(false)
    }
  })

  it('core + two adapters: errors raised inside the adapters are instances of the app’s own core classes', async () => {
    writeFileSync(
      join(dir, 'one-core.mjs'),
      `
      import { createTracker, ConvotrackError, ConfigError, InvalidRecordError } from '@convotrack/core'
      import { trackedSendApi } from '@convotrack/messenger'
      import { alexaTracking } from '@convotrack/alexa'
      import { createRequire } from 'node:module'
      const require = createRequire(import.meta.url)
      let thrown
      try { trackedSendApi(createTracker({ apiKey: 'k', baseUrl: process.env.SINK }), {}) } catch (e) { thrown = e }
      const reported = []
      const tracker = createTracker({ apiKey: 'one-core', baseUrl: process.env.SINK, onError: (e) => reported.push(e) })
      const voice = alexaTracking(tracker)
      voice.setNotHandled({}) // not a handler input: reported by the adapter with core's InvalidRecordError
      const paths = ['@convotrack/messenger', '@convotrack/alexa', '@convotrack/redis', '@convotrack/import'].map((p) =>
        require.resolve('@convotrack/core', { paths: [require.resolve(p)] }),
      )
      await tracker.close()
      console.log(JSON.stringify({
        configError: thrown instanceof ConfigError && thrown instanceof ConvotrackError,
        invalidRecord: reported[0] instanceof InvalidRecordError && reported[0] instanceof ConvotrackError,
        sameFile: paths.every((p) => p === require.resolve('@convotrack/core')),
      }))
      `,
    )
    expect(await run('one-core.mjs')).toEqual({ configError: true, invalidRecord: true, sameFile: true })
  })
})
