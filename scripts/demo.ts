/**
 * The convotrack demo: `pnpm demo`.
 *
 * Starts the local collector on 127.0.0.1:8787 (or the next free port), starts every example
 * bot that exists in examples/ (each drives its real framework in-process and is tracked with
 * its own key), runs their scripted conversations, prints the dashboard URL, then keeps a demo
 * user talking to each pausable bot every few seconds — pause one in the dashboard and its
 * replies stop here. Ctrl-C to stop.
 *
 *   DEMO_EXIT=1 tsx scripts/demo.ts     # or --once: exit after the scripted conversations
 *   DEMO_PORT=0 tsx scripts/demo.ts     # any free port
 *   DEMO_DB=./demo.db                   # keep the records in a file (default :memory:)
 */
import { existsSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { Collector } from '@convotrack/collector'
import { generateWebhookSecret } from '@convotrack/core'
import { kikSdkUnsupportedReason } from '@convotrack/kik'
import type { ExampleBot, ExampleBotOptions } from '../examples/contract'
import { startCollector } from '../packages/collector/src/index'

const EXAMPLES = ['alexa', 'slack', 'messenger', 'botbuilder', 'kik', 'universal', 'import'] as const
const ROOT = fileURLToPath(new URL('..', import.meta.url))
const ONCE = process.env.DEMO_EXIT === '1' || process.argv.includes('--once')
const TICK_MS = Number(process.env.DEMO_TICK_MS ?? 3000)
/** What the demo user keeps saying: something each bot understands, and something none does. */
const LINES = ['hello', 'tell me about mars', 'where is my order?', 'what is the meaning of life?', 'thanks!']

const bold = (s: string) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s)
const dim = (s: string) => (process.stdout.isTTY ? `\x1b[2m${s}\x1b[0m` : s)

/** The demo user's id on each platform (the messenger stand-in only knows PSID_… recipients). */
function demoUser(bot: string): string {
  // Letters, digits and _ only: valid as a Kik username, a Slack id, an Alexa account suffix…
  return bot === 'messenger' ? 'PSID_DEMO' : `demo_${bot}`
}

interface RunningBot {
  name: string
  bot: ExampleBot
  records: number
}

async function listen(): Promise<Collector> {
  const first = Number(process.env.DEMO_PORT ?? 8787)
  const db = process.env.DEMO_DB ?? ':memory:'
  // Port 0 asks the system; otherwise 8787 and up, so a collector already running is left alone.
  for (let port = first; port < first + 20 || first === 0; port++) {
    try {
      return await startCollector({ port, host: '127.0.0.1', db, webhookRetry: { attempts: 3, baseDelayMs: 200 } })
    } catch (e) {
      if ((e as { code?: string }).code !== 'EADDRINUSE' || first === 0) throw e
      console.log(dim(`port ${port} is in use, trying ${port + 1}`))
    }
  }
  throw new Error(`no free port in ${first}..${first + 19}`)
}

async function startBots(collector: Collector): Promise<RunningBot[]> {
  const running: RunningBot[] = []
  for (const name of EXAMPLES) {
    const file = `${ROOT}examples/${name}/src/bot.ts`
    if (!existsSync(file)) {
      console.log(dim(`· ${name}: examples/${name}/src/bot.ts not there yet — skipped`))
      continue
    }
    // The Kik SDK cannot run on Node >= 23: say so instead of failing to start.
    const unsupported = name === 'kik' ? kikSdkUnsupportedReason() : undefined
    if (unsupported) {
      console.log(dim(`· kik: skipped — ${unsupported}`))
      continue
    }
    const apiKey = `demo-${name}-key`
    const webhookSecret = generateWebhookSecret()
    try {
      const mod = (await import(pathToFileURL(file).href)) as {
        startExampleBot?: (o: ExampleBotOptions) => Promise<ExampleBot>
      }
      if (typeof mod.startExampleBot !== 'function') {
        console.log(dim(`· ${name}: no startExampleBot export — skipped`))
        continue
      }
      // Registered before the bot starts talking; its pause webhook URL is known once it listens.
      const bot = await mod.startExampleBot({ trackingUrl: collector.url, apiKey, webhookSecret, verbose: false })
      const { operatorMessageUrl } = bot
      collector.addBot({
        name,
        apiKey,
        webhookSecret,
        ...(bot.pauseWebhookUrl ? { pauseWebhookUrl: bot.pauseWebhookUrl } : {}),
        ...(operatorMessageUrl ? { operatorMessageUrl } : {}),
      })
      running.push({ name, bot, records: 0 })
      const extras = [
        bot.pauseWebhookUrl ? 'pause webhook' : 'no pause webhook',
        operatorMessageUrl ? 'operator messages' : '',
      ]
      console.log(`✓ ${bold(name)} started ${dim(`(${extras.filter(Boolean).join(', ')})`)}`)
    } catch (e) {
      console.log(`✗ ${name}: could not start — ${(e as Error).message}`)
    }
  }
  return running
}

async function main(): Promise<void> {
  const collector = await listen()
  console.log(`\n${bold('convotrack demo')} — collector on ${collector.url}\n`)
  const bots = await startBots(collector)
  if (bots.length === 0) throw new Error('no example bot could be started')

  console.log('\nScripted conversations (real frameworks, tracked to the collector):')
  let failed = 0
  for (const b of bots) {
    const t0 = Date.now()
    try {
      await b.bot.converse()
      await b.bot.tracker.flush(10_000)
      b.records = (await collector.store.recent({ bot: b.name, limit: 5000 })).length
      const stats = b.bot.tracker.stats()
      const problems = stats.failed + stats.dropped
      if (b.records === 0 || problems > 0) failed++
      console.log(
        `  ${b.records > 0 && problems === 0 ? '✓' : '✗'} ${b.name.padEnd(11)} ${String(b.records).padStart(3)} messages stored ${dim(`(${stats.sent} records sent, ${problems} lost, ${Date.now() - t0} ms)`)}`,
      )
    } catch (e) {
      failed++
      console.log(`  ✗ ${b.name.padEnd(11)} conversation failed: ${(e as Error).message}`)
    }
  }

  // Live takeover, end to end: the collector's Pause calls the bot's signed webhook, the bot goes quiet.
  const pausable = bots.filter((b) => b.bot.pauseWebhookUrl)
  if (pausable.length) console.log('\nLive takeover check (Pause / Unpause through the collector):')
  for (const b of pausable) {
    const problem = await checkTakeover(collector, b).catch((e: Error) => e.message)
    if (problem) failed++
    console.log(
      `  ${problem ? '✗' : '✓'} ${b.name.padEnd(11)} ${problem ?? 'paused → no reply; unpaused → answers again'}`,
    )
  }

  console.log(`\n${bold('Dashboard:')} ${collector.url}/`)

  const shutdown = async (code: number) => {
    await Promise.allSettled(bots.map((b) => withTimeout(b.bot.close(), 5000)))
    await collector.close()
    process.exit(code)
  }

  if (ONCE) {
    console.log(failed === 0 ? 'All scripted conversations tracked.' : `${failed} bot(s) had problems.`)
    await shutdown(failed === 0 ? 0 : 1)
    return
  }

  // Keep one demo user per pausable bot talking, so a pause in the dashboard shows here.
  const live = bots.filter((b) => b.bot.pauseWebhookUrl)
  const threads = new Map<string, string>()
  console.log(`\nLive takeover: a demo user talks to each bot every ${(TICK_MS * live.length) / 1000} s.`)
  console.log('Open a transcript below, press Pause, and watch that bot go quiet; Unpause brings it back.')
  // Several real frameworks share this process: an error one of them throws late is shown, not fatal.
  process.on('uncaughtException', (e) => console.log(`  ! uncaught error (the demo keeps running): ${e.message}`))
  process.on('unhandledRejection', (e) =>
    console.log(`  ! unhandled rejection (the demo keeps running): ${(e as Error)?.message ?? e}`),
  )
  let tick = 0
  let stopping = false
  process.on('SIGINT', () => {
    if (stopping) process.exit(1)
    stopping = true
    console.log('\nStopping…')
    void shutdown(0)
  })
  while (!stopping && live.length > 0) {
    const b = live[tick % live.length] as RunningBot
    const line = LINES[Math.floor(tick / live.length) % LINES.length] as string
    tick++
    const userId = demoUser(b.name)
    try {
      const replies = await b.bot.say(userId, line)
      await b.bot.tracker.flush(5000)
      if (!threads.has(b.name)) {
        // The transcript the dashboard shows for this user (the bot's pause key: a channel, a chat id…).
        const [last] = await collector.store.recent({ bot: b.name, limit: 1 })
        if (last) {
          threads.set(b.name, last.thread)
          console.log(
            dim(
              `   ${b.name} transcript: ${collector.url}/#/conversations/${encodeURIComponent(b.name)}/${encodeURIComponent(last.thread)}`,
            ),
          )
        }
      }
      const thread = threads.get(b.name)
      const paused = thread !== undefined && (await b.bot.tracker.isPaused(thread))
      const said = replies.length
        ? replies.map((r) => `“${r}”`).join(' ')
        : dim(paused ? '(paused — no reply)' : '(no reply)')
      console.log(`[${b.name}] ${userId}: “${line}” → ${said}`)
    } catch (e) {
      console.log(`[${b.name}] ${userId}: “${line}” → error: ${(e as Error).message}`)
    }
    await new Promise((r) => setTimeout(r, TICK_MS))
  }
}

/** Pauses the demo user from the collector, checks the bot stays quiet, unpauses, checks it answers. */
async function checkTakeover(collector: Collector, b: RunningBot): Promise<string | undefined> {
  const userId = demoUser(b.name)
  const before = await b.bot.say(userId, 'hello')
  await b.bot.tracker.flush(5000)
  const [last] = await collector.store.recent({ bot: b.name, limit: 1 })
  if (!last) return 'nothing was tracked for the demo user'
  const pause = async (paused: boolean) => {
    const res = await fetch(`${collector.url}/api/pause`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ bot: b.name, thread: last.thread, paused }),
    })
    if (!res.ok)
      throw new Error(
        `${paused ? 'pause' : 'unpause'} failed: ${((await res.json()) as { error: { message: string } }).error.message}`,
      )
  }
  await pause(true)
  const during = await b.bot.say(userId, 'hello?')
  await pause(false)
  const after = await b.bot.say(userId, 'hello')
  await b.bot.tracker.flush(5000)
  if (during.length > 0) return `still answered while paused: ${JSON.stringify(during)}`
  if (before.length > 0 && after.length === 0) return 'did not answer again after unpause'
  return undefined
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  return Promise.race([p, new Promise<undefined>((r) => setTimeout(() => r(undefined), ms).unref())])
}

main().catch((e) => {
  console.error(`demo failed: ${(e as Error).stack ?? e}`)
  process.exit(1)
})
