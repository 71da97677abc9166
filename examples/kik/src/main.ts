/** Runs the Kik example against the local collector: `pnpm --filter @convotrack/example-kik start`. */
import { startExampleBot } from './bot'

const bot = await startExampleBot({
  trackingUrl: process.env.CONVOTRACK_URL ?? 'http://127.0.0.1:8787',
  apiKey: process.env.CONVOTRACK_API_KEY ?? 'demo-key',
  webhookSecret: process.env.CONVOTRACK_WEBHOOK_SECRET,
  verbose: true,
})
if (bot.pauseWebhookUrl) console.log(`pause webhook: ${bot.pauseWebhookUrl}`)
await bot.converse()
await bot.close()
const stats = bot.tracker.stats()
console.log(`tracking: ${stats.sent} records delivered, ${stats.failed} failed, ${stats.dropped} dropped`)
