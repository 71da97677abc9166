/**
 * Runs the example Alexa skill against a tracking service (the local collector by default):
 *   CONVOTRACK_URL=http://127.0.0.1:8787 CONVOTRACK_API_KEY=demo-key pnpm --filter @convotrack/example-alexa start
 */
import { startExampleBot } from './bot'

const trackingUrl = process.env.CONVOTRACK_URL ?? 'http://127.0.0.1:8787'
const apiKey = process.env.CONVOTRACK_API_KEY ?? 'demo-key'

const bot = await startExampleBot({
  trackingUrl,
  apiKey,
  webhookSecret: process.env.CONVOTRACK_WEBHOOK_SECRET,
  verbose: true,
})
console.log(`Alexa example skill → ${trackingUrl}`)
if (bot.pauseWebhookUrl) console.log(`pause webhook: ${bot.pauseWebhookUrl}`)
try {
  await bot.converse()
  const s = bot.tracker.stats()
  console.log(`tracked: ${s.sent} records delivered, ${s.failed} failed, ${s.dropped} dropped`)
} finally {
  await bot.close()
}
