/**
 * What every example's `main.ts` does: start the bot against the tracking service named by the
 * environment (the local collector by default), run its scripted conversation, print what was
 * tracked, close.
 */
import type { ExampleBot, ExampleBotOptions } from './contract'

export async function runExample(
  name: string,
  start: (options: ExampleBotOptions) => Promise<ExampleBot>,
): Promise<void> {
  const trackingUrl = process.env.CONVOTRACK_URL ?? 'http://127.0.0.1:8787'
  const bot = await start({
    trackingUrl,
    apiKey: process.env.CONVOTRACK_API_KEY ?? 'demo-key',
    webhookSecret: process.env.CONVOTRACK_WEBHOOK_SECRET,
    verbose: true,
  })
  console.log(`${name} example → ${trackingUrl}`)
  if (bot.pauseWebhookUrl) console.log(`pause webhook: ${bot.pauseWebhookUrl}`)
  try {
    await bot.converse()
  } finally {
    await bot.close()
  }
  const s = bot.tracker.stats()
  console.log(`tracked: ${s.sent} records delivered, ${s.failed} failed, ${s.dropped} dropped`)
}
