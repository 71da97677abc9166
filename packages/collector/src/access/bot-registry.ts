import type { BotConfig } from '../options'

/** What the dashboard may know about a bot: never its key or secrets. */
export interface BotInfo {
  name: string
  /** A pause webhook URL is registered (the dashboard can pause this bot's transcripts). */
  canPause: boolean
  /** Pause webhook calls are signed. */
  signed: boolean
  /** An operator message URL is registered. */
  canMessage: boolean
}

/** The demo bot every collector has unless told otherwise. */
export const DEMO_BOT: BotConfig = Object.freeze({ name: 'demo', apiKey: 'demo-key' })

/**
 * The registered bots, found by tracking key (`POST /track`) or by name (dashboard).
 *
 * @example const bots = new BotRegistry([{ name: 'demo', apiKey: 'demo-key' }]); bots.forKey('demo-key')?.name
 */
export class BotRegistry {
  private readonly byKey = new Map<string, BotConfig>()
  private readonly byName = new Map<string, BotConfig>()

  constructor(bots: readonly BotConfig[] = []) {
    for (const bot of bots) this.add(bot)
  }

  /** Registers a bot; throws when the name or key is missing or already taken. */
  add(bot: BotConfig): BotConfig {
    if (!bot || typeof bot.name !== 'string' || bot.name.trim() === '')
      throw new TypeError('bot.name must be a non-empty string')
    if (typeof bot.apiKey !== 'string' || bot.apiKey === '')
      throw new TypeError(`bot "${bot.name}": apiKey must be a non-empty string`)
    if (this.byName.has(bot.name)) throw new TypeError(`bot "${bot.name}" is registered twice`)
    if (this.byKey.has(bot.apiKey)) throw new TypeError(`bot "${bot.name}": its apiKey is already used by another bot`)
    for (const key of ['pauseWebhookUrl', 'operatorMessageUrl'] as const) {
      const url = bot[key]
      if (url !== undefined && !/^https?:\/\//.test(url))
        throw new TypeError(`bot "${bot.name}": ${key} must be an http(s) URL`)
    }
    const copy = { ...bot }
    this.byKey.set(copy.apiKey, copy)
    this.byName.set(copy.name, copy)
    return copy
  }

  forKey(apiKey: string): BotConfig | undefined {
    return this.byKey.get(apiKey)
  }

  get(name: string): BotConfig | undefined {
    return this.byName.get(name)
  }

  has(name: string): boolean {
    return this.byName.has(name)
  }

  hasKey(apiKey: string): boolean {
    return this.byKey.has(apiKey)
  }

  /** Public view of every bot. */
  list(): BotInfo[] {
    return [...this.byName.values()].map(botInfo)
  }
}

/** Public view of one bot. */
export function botInfo(bot: BotConfig): BotInfo {
  return {
    name: bot.name,
    canPause: !!bot.pauseWebhookUrl,
    signed: !!bot.webhookSecret,
    canMessage: !!bot.operatorMessageUrl,
  }
}
