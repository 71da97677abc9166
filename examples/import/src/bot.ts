/**
 * The third-party pull integration of spec 4.4, as an example "bot": conversations live in a
 * help desk (a local stand-in with a paginated API); the importer pulls them with the help
 * desk's own API and posts them as universal records (`v=10.1.1-rest`) through
 * `importRecords`. `say()` is a customer writing to the help desk: the new messages (and the
 * desk's answer) are pulled and imported incrementally.
 */
import { createTracker } from '@convotrack/core'
import { type ImportSummary, importRecords } from '@convotrack/import'
import type { ExampleBot, ExampleBotOptions } from '../../contract'
import { startHelpdesk } from './helpdesk'
import { HELPDESK_MAPPING, pullHelpdesk } from './pull'

export async function startExampleBot(options: ExampleBotOptions): Promise<ExampleBot> {
  const print = options.verbose ? (line: string) => console.log(line) : () => {}
  const tracker = createTracker({ apiKey: options.apiKey, baseUrl: options.trackingUrl, v: '10.1.1-rest' })
  const helpdesk = await startHelpdesk({ perPage: 2 })
  /** Highest help desk message id imported so far: the next pull starts after it. */
  let cursor = 0

  /** Pulls what is new in the help desk and imports it. */
  async function sync(): Promise<ImportSummary> {
    let highest = cursor
    async function* newMessages() {
      for await (const row of pullHelpdesk(helpdesk.url, helpdesk.token, cursor)) {
        highest = Math.max(highest, row.message_id)
        yield row
      }
    }
    const summary = await importRecords(tracker, newMessages(), { map: HELPDESK_MAPPING, rate: 50 })
    // Advance only past a fully delivered pull, so nothing is skipped after a failure.
    if (summary.complete) cursor = highest
    for (const bad of summary.invalid) print(`  skipped message ${bad.position}: ${bad.message}`)
    return summary
  }

  /** A customer writes to the help desk; what is new is pulled and imported; the desk's answer is the reply. */
  async function say(userId: string, text: string): Promise<string[]> {
    const [, answer] = helpdesk.write(userId, text)
    const summary = await sync()
    print(`${userId}: ${text}`)
    print(`  help desk: ${answer?.body}`)
    print(`  (imported ${summary.sent} new messages)`)
    return answer ? [answer.body] : []
  }

  return {
    name: 'import',
    tracker,
    say,
    async converse() {
      const history = await sync()
      print(`imported the help desk history: ${history.sent} messages (${helpdesk.requests.length} API pages read)`)
      await say('cus_dana', 'Where is my order 5150? It is late.')
      await say('cus_dana', 'Thanks!')
      tracker.logEvent(
        { type: 'customEvent', name: 'helpdesk_import', userId: 'cus_dana', extraInfo: { source: 'helpdesk', cursor } },
        { platform: 'universal' },
      )
    },
    // No pause webhook: imported history is not a live conversation a person could take over.
    pauseWebhookUrl: undefined,
    async close() {
      await tracker.close()
      await helpdesk.close()
    },
  }
}
