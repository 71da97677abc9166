import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { validateAlerts } from './live/alerts'
import { validateHandoffOptions } from './live/handoff-rules'
import type { AuthOptions, AuthToken, AuthUser, BotConfig, CollectorOptions, MessengerPageConfig } from './options'

/** What `--help` prints. */
export const USAGE = `convotrack-collector — the local convotrack tracking service and dashboard

Usage: convotrack-collector [options]
       convotrack-collector hash-password            reads a password on stdin, prints its passwordHash
       convotrack-collector erase-user --db <file> --bot <name> --user <id>

  --port <n>                 TCP port (default 8787; 0 picks a free one)
  --host <addr>              interface to listen on (default 127.0.0.1)
  --db <file|:memory:|url>   SQLite file, or postgres://user:pass@host:5432/db for PostgreSQL
                             (default $DATABASE_URL when set, else ./convotrack.db)
  --config <bots.json>       { "bots": [...], "messengerPages": [...], "auth": {...}, "retainDays": n, "allowedHosts": [...],
                             "postgres": { "queryTimeoutMs": n, "connectionTimeoutMs": n, "maxConnections": n },
                             "handoff": { "intents", "keywords", "notHandledStreak", "autoResumeMinutes" },
                             "alerts": [{ "url", "events": ["handoff.waiting"], "secret"? }], "publicUrl": "https://…",
                             "traceUrl": "http://…/trace/{traceId}", "llmPrices": { "<model>": { "input": n, "output": n } },
                             "maxOtlpBytes": n }
  --bot <k=v,...>            register a bot: name=…,apiKey=…[,pauseWebhookUrl=…,webhookSecret=…,operatorMessageUrl=…]
  --messenger-page <k=v,...> connect a Messenger page: pageId=…,appSecret=…,verifyToken=…[,bot=…]
  --no-demo-bot              don't register the demo bot (apiKey demo-key)
  --max-body-bytes <n>       largest POST /track body (default 1048576)
  --no-auth                  allow a non-loopback --host without sign-in (auth in --config)
  --allowed-host <name>      a host name the dashboard answers to (repeatable; DNS-rebinding guard)
  --retain-days <n>          delete records older than n days (per bot: "retainDays" in --config)
  --log-level <level>        JSON log level: fatal, error, warn, info (default), debug, silent
  -h, --help                 this text

Secret values may be written env:NAME to read them from the environment.`

type Obj = Record<string, unknown>

/** `env:NAME` reads NAME from the environment, so secrets stay out of files and `ps`. */
function secretValue(value: unknown, where: string, env: NodeJS.ProcessEnv): unknown {
  if (typeof value !== 'string' || !value.startsWith('env:')) return value
  const name = value.slice(4)
  const v = env[name]
  if (v === undefined || v === '') throw new Error(`${where}: environment variable ${name} is not set`)
  return v
}

function botFrom(o: Obj, where: string, env: NodeJS.ProcessEnv): BotConfig {
  const bot: BotConfig = {
    name: String(o.name ?? ''),
    apiKey: String(secretValue(o.apiKey, `${where}.apiKey`, env) ?? ''),
  }
  if (!bot.name) throw new Error(`${where}: "name" is required`)
  if (!bot.apiKey) throw new Error(`${where}: "apiKey" is required`)
  for (const key of ['pauseWebhookUrl', 'operatorMessageUrl'] as const)
    if (typeof o[key] === 'string') bot[key] = o[key] as string
  const secret = secretValue(o.webhookSecret, `${where}.webhookSecret`, env)
  if (typeof secret === 'string') bot.webhookSecret = secret
  const days = o.retainDays === undefined ? undefined : Number(o.retainDays)
  if (days !== undefined) bot.retainDays = positive(days, `${where}.retainDays`)
  if (o.handoff !== undefined) bot.handoff = validateHandoffOptions(o.handoff, `${where}.handoff`)
  return bot
}

const positive = (v: unknown, where: string): number | undefined => {
  if (v === undefined) return undefined
  if (typeof v !== 'number' || !(v > 0)) throw new Error(`${where} must be a positive number`)
  return v
}

function authFrom(o: Obj, where: string, env: NodeJS.ProcessEnv): AuthOptions {
  const auth: AuthOptions = {}
  const list = (key: string): Obj[] => {
    const v = o[key]
    if (v === undefined) return []
    if (!Array.isArray(v)) throw new Error(`${where}.${key} must be an array`)
    return v.map((x) => (x ?? {}) as Obj)
  }
  if (o.users !== undefined)
    auth.users = list('users').map((u, i) => {
      const w = `${where}.users[${i}]`
      const hash = secretValue(u.passwordHash, `${w}.passwordHash`, env)
      return {
        name: String(u.name ?? ''),
        ...(typeof hash === 'string' ? { passwordHash: hash } : {}),
        role: u.role as AuthUser['role'],
        bots: u.bots as string[],
      }
    })
  if (o.tokens !== undefined)
    auth.tokens = list('tokens').map((t, i) => ({
      name: String(t.name ?? ''),
      token: String(secretValue(t.token, `${where}.tokens[${i}].token`, env) ?? ''),
      role: t.role as AuthToken['role'],
      bots: t.bots as string[],
    }))
  for (const key of ['metricsToken', 'sessionSecret'] as const) {
    const v = secretValue(o[key], `${where}.${key}`, env)
    if (typeof v === 'string') auth[key] = v
  }
  if (typeof o.trustProxyHeader === 'string') auth.trustProxyHeader = o.trustProxyHeader
  if (Array.isArray(o.trustProxyFrom)) auth.trustProxyFrom = o.trustProxyFrom.map(String)
  const hours = positive(o.sessionHours, `${where}.sessionHours`)
  if (hours !== undefined) auth.sessionHours = hours
  return auth
}

function pageFrom(o: Obj, where: string, env: NodeJS.ProcessEnv): MessengerPageConfig {
  const page: MessengerPageConfig = {
    pageId: String(o.pageId ?? ''),
    appSecret: String(secretValue(o.appSecret, `${where}.appSecret`, env) ?? ''),
    verifyToken: String(secretValue(o.verifyToken, `${where}.verifyToken`, env) ?? ''),
  }
  for (const key of ['pageId', 'appSecret', 'verifyToken'] as const)
    if (!page[key]) throw new Error(`${where}: "${key}" is required`)
  if (typeof o.bot === 'string' && o.bot) page.bot = o.bot
  return page
}

/**
 * Reads a config file: `{ bots: BotConfig[], messengerPages?: MessengerPageConfig[], port?, host?, db? }`,
 * or just an array of bots.
 *
 * @example const options = loadConfigFile('./bots.json')
 */
export function loadConfigFile(path: string, env: NodeJS.ProcessEnv = process.env): CollectorOptions {
  let parsed: unknown
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'))
  } catch (e) {
    throw new Error(`cannot read config ${path}: ${(e as Error).message}`)
  }
  const root: Obj = Array.isArray(parsed) ? { bots: parsed } : ((parsed ?? {}) as Obj)
  const options: CollectorOptions = {}
  if (root.bots !== undefined) {
    if (!Array.isArray(root.bots)) throw new Error(`${path}: "bots" must be an array`)
    options.bots = root.bots.map((b, i) => botFrom((b ?? {}) as Obj, `${path} bots[${i}]`, env))
  }
  if (root.messengerPages !== undefined) {
    if (!Array.isArray(root.messengerPages)) throw new Error(`${path}: "messengerPages" must be an array`)
    options.messengerPages = root.messengerPages.map((p, i) =>
      pageFrom((p ?? {}) as Obj, `${path} messengerPages[${i}]`, env),
    )
  }
  if (typeof root.port === 'number') options.port = root.port
  if (typeof root.host === 'string') options.host = root.host
  if (typeof root.db === 'string') options.db = root.db
  if (root.postgres !== undefined) options.postgres = postgresFrom(root.postgres, `${path}: "postgres"`)
  if (typeof root.demoBot === 'boolean') options.demoBot = root.demoBot
  if (root.auth !== undefined) {
    if (typeof root.auth !== 'object' || root.auth === null) throw new Error(`${path}: "auth" must be an object`)
    options.auth = authFrom(root.auth as Obj, `${path} auth`, env)
  }
  if (typeof root.noAuth === 'boolean') options.noAuth = root.noAuth
  if (root.allowedHosts !== undefined) {
    if (!Array.isArray(root.allowedHosts)) throw new Error(`${path}: "allowedHosts" must be an array`)
    options.allowedHosts = root.allowedHosts.map(String)
  }
  const days = positive(root.retainDays, `${path}: "retainDays"`)
  if (days !== undefined) options.retainDays = days
  if (root.handoff !== undefined) options.handoff = validateHandoffOptions(root.handoff, `${path}: "handoff"`)
  if (root.alerts !== undefined) {
    if (!Array.isArray(root.alerts)) throw new Error(`${path}: "alerts" must be an array`)
    // A Slack webhook URL is a secret too: `env:NAME` works for `url` and `secret`.
    const alerts = root.alerts.map((a, i) => {
      const o = (a ?? {}) as Obj
      const where = `${path} alerts[${i}]`
      return {
        ...o,
        url: secretValue(o.url, `${where}.url`, env),
        secret: secretValue(o.secret, `${where}.secret`, env),
      }
    })
    try {
      options.alerts = validateAlerts(alerts)
    } catch (e) {
      throw new Error(`${path}: ${(e as Error).message}`)
    }
  }
  if (typeof root.publicUrl === 'string') options.publicUrl = root.publicUrl
  // OpenTelemetry: checked with the other options when the collector starts (checkLlmOptions).
  if (root.traceUrl !== undefined) options.traceUrl = root.traceUrl as string
  if (root.llmPrices !== undefined) options.llmPrices = root.llmPrices as CollectorOptions['llmPrices']
  const otlp = positive(root.maxOtlpBytes, `${path}: "maxOtlpBytes"`)
  if (otlp !== undefined) options.maxOtlpBytes = otlp
  return options
}

/** `"postgres": { "maxConnections", "connectionTimeoutMs", "queryTimeoutMs", "listenHeartbeatMs" }` (numbers > 0). */
function postgresFrom(value: unknown, where: string): NonNullable<CollectorOptions['postgres']> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${where} must be an object`)
  const o = value as Obj
  const out: NonNullable<CollectorOptions['postgres']> = {}
  for (const key of ['maxConnections', 'connectionTimeoutMs', 'queryTimeoutMs', 'listenHeartbeatMs'] as const) {
    const v = positive(o[key], `${where}.${key}`)
    if (v !== undefined) out[key] = v
  }
  return out
}

function keyValues(spec: string): Obj {
  const out: Obj = {}
  for (const part of spec.split(',')) {
    const i = part.indexOf('=')
    if (i <= 0) throw new Error(`expected key=value pairs separated by commas, got "${part}"`)
    out[part.slice(0, i).trim()] = part.slice(i + 1).trim()
  }
  return out
}

/** Parsed command line: options for {@link startCollector}, or a request for help. */
export type CliCommand = { help: true } | { help: false; options: CollectorOptions }

/**
 * Turns the command line into collector options. Flags win over the config file; `--bot`
 * and `--messenger-page` add to the file's lists.
 *
 * @example parseCommandLine(['--port', '0', '--db', ':memory:'])
 */
export function parseCommandLine(argv: string[], env: NodeJS.ProcessEnv = process.env): CliCommand {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      db: { type: 'string' },
      config: { type: 'string' },
      bot: { type: 'string', multiple: true },
      'messenger-page': { type: 'string', multiple: true },
      'no-demo-bot': { type: 'boolean' },
      'max-body-bytes': { type: 'string' },
      'no-auth': { type: 'boolean' },
      'allowed-host': { type: 'string', multiple: true },
      'retain-days': { type: 'string' },
      'log-level': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  })
  if (values.help) return { help: true }
  const options: CollectorOptions = values.config ? loadConfigFile(values.config, env) : {}
  if (values.port !== undefined) {
    const port = Number(values.port)
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new Error(`--port must be 0..65535, got "${values.port}"`)
    options.port = port
  }
  if (values.host !== undefined) options.host = values.host
  options.db = values.db ?? options.db ?? (env.DATABASE_URL || undefined) ?? './convotrack.db'
  const bots = (values.bot ?? []).map((spec, i) => botFrom(keyValues(spec), `--bot #${i + 1}`, env))
  if (bots.length) options.bots = [...(options.bots ?? []), ...bots]
  const pages = (values['messenger-page'] ?? []).map((spec, i) =>
    pageFrom(keyValues(spec), `--messenger-page #${i + 1}`, env),
  )
  if (pages.length) options.messengerPages = [...(options.messengerPages ?? []), ...pages]
  if (values['no-demo-bot']) options.demoBot = false
  if (values['no-auth']) options.noAuth = true
  if (values['allowed-host']?.length)
    options.allowedHosts = [...(options.allowedHosts ?? []), ...values['allowed-host']]
  if (values['retain-days'] !== undefined) {
    const n = Number(values['retain-days'])
    if (!(n > 0)) throw new Error('--retain-days must be a positive number')
    options.retainDays = n
  }
  const level = values['log-level']
  if (level !== undefined) {
    if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(level))
      throw new Error('--log-level must be fatal, error, warn, info, debug, trace or silent')
    options.log = level === 'silent' ? false : (level as 'info')
  }
  if (values['max-body-bytes'] !== undefined) {
    const n = Number(values['max-body-bytes'])
    if (!Number.isInteger(n) || n <= 0) throw new Error('--max-body-bytes must be a positive integer')
    options.maxBodyBytes = n
  }
  return { help: false, options }
}
