/**
 * The convotrack demo: `pnpm demo`.
 *
 * Starts the local collector on 127.0.0.1:8787 (or the next free port), starts every example
 * bot that exists in examples/ (each drives its real framework in-process and is tracked with
 * its own key), runs their scripted conversations, prints the dashboard URL, then keeps a demo
 * user talking to each pausable bot every few seconds — pause one in the dashboard and its
 * replies stop here. The dashboard and transcript URLs stay on screen: on a terminal the live
 * chat is one line redrawn in place; piped, each turn is a line and the URLs are repeated every
 * minute. Ctrl-C stops it cleanly (exit code 0).
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
/** Live turns between two repeats of the URLs when the output is not a terminal (~1 min). */
const URLS_EVERY = Math.max(1, Math.round(60_000 / TICK_MS))

/**
 * What each bot's demo user keeps saying, in a loop: mostly what that bot understands, plus a
 * few things it does not (about one in four), so the NotHandled report looks like a real bot's.
 */
const SCRIPTS: Record<string, string[]> = {
  alexa: [
    'open space facts',
    'tell me about mars',
    'tell me about jupiter',
    'what time is it?',
    'tell me about saturn',
    'tell me about pluto',
    'tell me about venus',
    'goodbye',
  ],
  slack: ['hello', 'weather in Paris', 'weather in Oslo', 'can you book a meeting room?', 'weather', 'hey'],
  messenger: ['hi', 'where is order 1234?', 'thanks!', 'do you sell gift cards?', 'where is order 5678', 'thanks'],
  botbuilder: ['hello', 'where is order 4321?', 'order #77 please', 'can I change my address?', 'hey'],
  kik: ['hey', 'where is order 1234?', 'thanks', 'what are your opening hours?', 'order 99?', 'thank you'],
  universal: ['hi', 'order #2024', 'thanks', 'I want to talk to a human', 'hello', 'order 31 status'],
  import: ['Where is my parcel?', 'I would like a refund', 'Is my order late?', 'Do you ship to Norway?'],
}
const FALLBACK_SCRIPT = ['hello', 'thanks!', 'what is the meaning of life?']

const TTY = process.stdout.isTTY === true
const bold = (s: string) => (TTY ? `\x1b[1m${s}\x1b[0m` : s)
const dim = (s: string) => (TTY ? `\x1b[2m${s}\x1b[0m` : s)

/**
 * The live chat's output. On a terminal, one status line redrawn in place, so the URLs printed
 * above it never scroll away; lines that matter (a pause, an error) are kept, and the URLs are
 * printed again once a few of those have pushed them up. Piped (a log, CI): a line per turn
 * and the URLs every `URLS_EVERY` turns.
 */
class LiveOutput {
  private statusShown = false
  private keptSinceUrls = 0
  private turnsSinceUrls = 0

  constructor(private readonly urls: () => string) {}

  /** A turn of the live chat. */
  turn(line: string): void {
    if (TTY) {
      const width = process.stdout.columns || 100
      // biome-ignore lint/suspicious/noControlCharactersInRegex: strips the terminal's colour codes
      const plain = line.replace(/\x1b\[[0-9;]*m/g, '')
      process.stdout.write(`\r\x1b[2K${plain.length > width - 1 ? `${plain.slice(0, width - 2)}…` : line}`)
      this.statusShown = true
      return
    }
    console.log(line)
    if (++this.turnsSinceUrls >= URLS_EVERY) this.printUrls()
  }

  /** A line that stays (a pause seen, an error). */
  keep(line: string): void {
    this.endStatus()
    console.log(line)
    if (TTY && ++this.keptSinceUrls >= 8) this.printUrls()
  }

  printUrls(): void {
    this.endStatus()
    console.log(this.urls())
    this.keptSinceUrls = 0
    this.turnsSinceUrls = 0
  }

  /** Moves past the status line, so what follows starts on its own line. */
  endStatus(): void {
    if (this.statusShown) process.stdout.write('\n')
    this.statusShown = false
  }
}

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

  // The demo user's transcript on each live bot (the bot's pause key: a channel, a chat id…).
  const live = bots.filter((b) => b.bot.pauseWebhookUrl)
  const threads = new Map<string, string>()
  for (const b of live) {
    const thread = await demoThread(collector, b)
    if (thread) threads.set(b.name, thread)
  }
  const transcriptUrl = (bot: string, thread: string) =>
    `${collector.url}/#/conversations/${encodeURIComponent(bot)}/${encodeURIComponent(thread)}`
  const urls = () =>
    [
      '',
      `${bold('Dashboard:')} ${collector.url}/`,
      ...(threads.size ? ['Transcripts of the demo users (open one, press Pause, watch that bot go quiet here):'] : []),
      ...[...threads].map(([bot, thread]) => `  ${bot.padEnd(11)} ${transcriptUrl(bot, thread)}`),
      dim('Ctrl-C stops the demo.'),
      '',
    ].join('\n')

  let stopping = false
  const shutdown = async (code: number) => {
    await Promise.allSettled(bots.map((b) => withTimeout(b.bot.close(), 5000)))
    await collector.close()
    process.exit(code)
  }

  if (ONCE) {
    console.log(urls())
    console.log(failed === 0 ? 'All scripted conversations tracked.' : `${failed} bot(s) had problems.`)
    await shutdown(failed === 0 ? 0 : 1)
    return
  }

  const out = new LiveOutput(urls)
  console.log(
    `\nLive: a demo user talks to each bot every ${(TICK_MS * live.length) / 1000} s${TTY ? ' (the line below)' : ''}.`,
  )
  out.printUrls()
  // Several real frameworks share this process: an error one of them throws late is shown, not fatal.
  process.on('uncaughtException', (e) => out.keep(`  ! uncaught error (the demo keeps running): ${e.message}`))
  process.on('unhandledRejection', (e) =>
    out.keep(`  ! unhandled rejection (the demo keeps running): ${(e as Error)?.message ?? e}`),
  )
  // Ctrl-C is how the demo ends, not a failure: stop the bots and the collector and exit 0.
  // `pnpm demo` runs this process with `exec` (no shell in between, which a second SIGINT
  // would kill, making pnpm print ELIFECYCLE), and pnpm passes the Ctrl-C on once more: a
  // repeat within 2 s is the same Ctrl-C. A later one exits at once, still 0.
  let stopAt = 0
  const stop = () => {
    if (stopping) {
      if (Date.now() - stopAt > 2000) process.exit(0)
      return
    }
    stopping = true
    stopAt = Date.now()
    out.endStatus()
    console.log('Stopping the demo…')
    void shutdown(0)
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)

  let tick = 0
  const pausedSeen = new Map<string, boolean>()
  while (!stopping && live.length > 0) {
    const b = live[tick % live.length] as RunningBot
    const script = SCRIPTS[b.name] ?? FALLBACK_SCRIPT
    const line = script[Math.floor(tick / live.length) % script.length] as string
    tick++
    const userId = demoUser(b.name)
    try {
      const replies = await b.bot.say(userId, line)
      await b.bot.tracker.flush(5000)
      const thread = threads.get(b.name)
      const paused = thread !== undefined && (await b.bot.tracker.isPaused(thread))
      if (paused !== (pausedSeen.get(b.name) ?? false)) {
        pausedSeen.set(b.name, paused)
        out.keep(
          paused
            ? `  ${bold(b.name)} paused from the dashboard: its user is still tracked, the bot stays quiet.`
            : `  ${bold(b.name)} unpaused: the bot answers again.`,
        )
      }
      const said = replies.length
        ? replies.map((r) => `“${r}”`).join(' ')
        : paused
          ? '(paused — no reply)'
          : '(no reply)'
      out.turn(`${dim(time())} [${b.name}] ${userId}: “${line}” → ${said}`)
    } catch (e) {
      out.keep(`[${b.name}] ${userId}: “${line}” → error: ${(e as Error).message}`)
    }
    await new Promise((r) => setTimeout(r, TICK_MS))
  }
}

const time = () => new Date().toLocaleTimeString([], { hour12: false })

/** The transcript (thread) the demo user's messages land in on this bot. */
async function demoThread(collector: Collector, b: RunningBot): Promise<string | undefined> {
  const userId = demoUser(b.name)
  const recent = await collector.store.recent({ bot: b.name, limit: 200 })
  return ([...recent].reverse().find((m) => m.userId === userId) ?? recent.at(-1))?.thread
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
