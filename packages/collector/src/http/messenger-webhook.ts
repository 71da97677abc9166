import { createHmac, timingSafeEqual } from 'node:crypto'
import express, { type Request, type Response, type Router } from 'express'
import { RequestError } from '../errors'
import { ingest, type StoredHook } from '../ingest/ingest'
import { validateRecord } from '../ingest/validate-record'
import type { LiveFeed } from '../live/live-feed'
import type { MessengerPageConfig } from '../options'
import type { RecordStore } from '../store/store'

/** The collector's route Messenger posts to: `{collector.url}/messenger/webhook`. */
export const MESSENGER_WEBHOOK_PATH = '/messenger/webhook'

/**
 * True when `header` (`X-Hub-Signature-256: sha256=<hex>`) is the HMAC-SHA256 of the raw body
 * with `appSecret`. Constant-time compare.
 *
 * @example verifyHubSignature(rawBody, req.get('x-hub-signature-256'), process.env.FB_APP_SECRET!)
 */
export function verifyHubSignature(rawBody: Buffer, header: string | undefined, appSecret: string): boolean {
  if (!header?.startsWith('sha256=')) return false
  const given = Buffer.from(header.slice(7), 'hex')
  const expected = createHmac('sha256', appSecret).update(rawBody).digest()
  return given.length === expected.length && timingSafeEqual(given, expected)
}

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * The no-code Messenger connection (spec: "What the service does", item 6): answers the
 * subscription challenge, verifies `X-Hub-Signature-256` on the raw body (401 and nothing
 * stored otherwise) and records live traffic of connected pages: user messages as incoming,
 * the page's echoes (`is_echo`) as outgoing. Delivery and read receipts are not stored.
 *
 * @example app.use(messengerWebhook({ pages: () => pages, store, feed }))
 */
export function messengerWebhook(deps: {
  pages: () => MessengerPageConfig[]
  botFor: (page: MessengerPageConfig) => string
  store: RecordStore
  feed: LiveFeed
  /** Told of what each record stored (the handoff queue); never awaited. */
  onStored?: StoredHook
}): Router {
  const router = express.Router()

  router.get(MESSENGER_WEBHOOK_PATH, (req: Request, res: Response) => {
    const q = new URL(req.originalUrl, 'http://collector').searchParams
    const token = q.get('hub.verify_token')
    const known = token !== null && deps.pages().some((p) => safeEqual(p.verifyToken, token))
    if (q.get('hub.mode') !== 'subscribe' || !known) {
      res
        .status(403)
        .json(
          new RequestError(
            403,
            'invalid_request',
            'hub.mode must be subscribe and hub.verify_token a connected page’s verify token',
            'hub.verify_token',
          ).toJSON(),
        )
      return
    }
    res.type('text/plain').send(q.get('hub.challenge') ?? '')
  })

  router.post(
    MESSENGER_WEBHOOK_PATH,
    express.raw({ type: () => true, limit: '1mb' }),
    async (req: Request, res: Response) => {
      const raw: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0)
      const header = req.get('x-hub-signature-256')
      // The pages whose app secret signed these bytes: only their entries are taken.
      const signedBy = deps.pages().filter((p) => verifyHubSignature(raw, header, p.appSecret))
      if (signedBy.length === 0)
        throw new RequestError(
          401,
          'invalid_signature',
          'X-Hub-Signature-256 is missing or does not match the app secret',
          'x-hub-signature-256',
        )
      let body: unknown
      try {
        body = JSON.parse(raw.toString('utf8'))
      } catch {
        throw new RequestError(400, 'invalid_json', 'the body is not valid JSON', '')
      }
      if (!isObj(body) || body.object !== 'page' || !Array.isArray(body.entry))
        throw new RequestError(
          400,
          'invalid_field',
          'expected a page webhook body: { object: "page", entry: [...] }',
          'object',
        )
      let stored = 0
      for (const entry of body.entry) {
        if (!isObj(entry) || !Array.isArray(entry.messaging)) continue
        const page = signedBy.find((p) => p.pageId === entry.id)
        if (!page) continue
        const items = entry.messaging.filter((m): m is Obj => isObj(m) && (isObj(m.message) || isObj(m.postback)))
        const echoes = items.filter((m) => (m.message as Obj | undefined)?.is_echo === true)
        const user = items.filter((m) => (m.message as Obj | undefined)?.is_echo !== true)
        for (const [type, group] of [
          ['incoming', user],
          ['outgoing', echoes],
        ] as const) {
          if (group.length === 0) continue
          const record = { object: 'page', entry: [{ ...entry, messaging: group }] }
          try {
            // Same shape as an SDK-posted messenger incoming record.
            validateRecord('facebook', 'incoming', record)
            await ingest(
              deps.store,
              deps.feed,
              {
                bot: deps.botFor(page),
                platform: 'facebook',
                type,
                v: '11.1.0-rest',
                raw: JSON.stringify(record),
                body: record,
              },
              deps.onStored,
            )
            stored++
          } catch (e) {
            // One entry the collector refuses (too deep, an id too long) must not make Facebook
            // retry the whole delivery, entries already stored included: it is logged and skipped.
            if (!(e instanceof RequestError)) throw e
            console.error(
              `[convotrack-collector] messenger webhook: entry of page ${page.pageId} refused: ${e.message.slice(0, 200)}`,
            )
          }
        }
      }
      res.status(200).json({ received: stored })
    },
  )
  return router
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}
