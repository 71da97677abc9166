/**
 * The records of the scale benchmark (bench/collector-scale.ts): record `i` is always the same
 * record (so a load can resume and its idempotency keys repeat), of a mixed-platform bot whose
 * event time is spread over `days` days ending at `end`, as each platform carries it.
 *
 * Records come in pairs: an even index is a user's message, the next odd one the bot's answer on
 * the same platform (or, for a few, an event). Per 100 pairs: 55 universal (half with an ISO 8601
 * `platformJson.timestamp`, half with epoch ms, as `convotrack import` writes them), 15 Messenger
 * (`messaging[].timestamp`), 10 Slack (`ts`), 8 Alexa (`request.timestamp`), 7 Twitter DMs
 * (`created_timestamp`), and 5 whose answer is an event (custom, or revenue with an amount).
 * ~8 % of the user messages are NotHandled.
 */

export interface ScaleShape {
  /** Records in the whole load. */
  records: number
  /** Distinct users. */
  users: number
  /** Event time runs over [end − days, end). */
  end: number
  days: number
  /** Spread event times over the span in any prefix of the load, not in index order. */
  interleaved?: boolean
}

export interface ScaleRecord {
  platform: string
  type: 'incoming' | 'outgoing' | 'event'
  /** The record's body as JSON text. */
  body: string
  /** Epoch ms the record's own time says (what the collector should take as its event time). */
  ts: number
}

const INTENTS = ['greeting', 'order.status', 'shop', 'returns', 'opening.hours', 'payment', 'delivery', 'goodbye']
const PHRASES = [
  'can I speak to a human',
  'my parcel is broken',
  'do you ship to Norway',
  'wtf',
  'cancel everything',
  'is this a bot?',
]
const LOCALES = ['en_GB', 'de_DE', 'fr_FR', 'es_ES', 'en_US']

/** A cheap, stable spread of i over 0..n-1 (so users are not visited in order). */
const spread = (i: number, n: number) => Math.floor((((i * 2_654_435_761) % 4_294_967_296) / 4_294_967_296) * n)

/** Record `i` of a load of `shape`. */
export function scaleRecord(i: number, shape: ScaleShape): ScaleRecord {
  const pair = Math.floor(i / 2)
  const incoming = i % 2 === 0
  const span = shape.days * 86_400_000
  const pairs = Math.max(1, Math.ceil(shape.records / 2))
  // Event time grows with the index (as an import of history would), jittered within ~an hour;
  // `interleaved`: pair p sits at the fractional part of p × φ along the span (a Weyl sequence), so
  // any first part of the load already covers the whole span evenly (a load cut short still has
  // "the last 30 days").
  const position = shape.interleaved ? (pair * 0.618_033_988_749_895) % 1 : pair / pairs
  const ts =
    Math.floor(shape.end - span + position * span + (spread(pair, 3_600_000) % (span / pairs))) + (incoming ? 0 : 800)
  const user = `user-${spread(pair, shape.users)}`
  const slot = pair % 100
  const notHandled = spread(pair + 7, 100) < 8
  const intent = notHandled ? 'NotHandled' : (INTENTS[pair % INTENTS.length] as string)
  const text = notHandled ? (PHRASES[pair % PHRASES.length] as string) : `about ${intent}, order ${pair % 10_000}`
  if (slot < 55) {
    const timestamp = slot % 2 === 0 ? new Date(ts).toISOString() : ts
    const body = incoming
      ? {
          text,
          userId: user,
          intent: { name: intent, confidence: notHandled ? 0.2 : 0.9 },
          platformUserJson: { locale: LOCALES[pair % LOCALES.length], plan: pair % 3 === 0 ? 'pro' : 'free' },
          platformJson: { timestamp },
        }
      : { text: `Here is what I know about ${intent}.`, userId: user, platformJson: { timestamp } }
    return { platform: 'universal', type: incoming ? 'incoming' : 'outgoing', body: JSON.stringify(body), ts }
  }
  if (slot < 70) {
    const psid = `psid-${user}`
    const body = incoming
      ? {
          object: 'page',
          entry: [
            {
              id: 'PAGE-1',
              time: ts,
              messaging: [
                {
                  sender: { id: psid },
                  recipient: { id: 'PAGE-1' },
                  timestamp: ts,
                  message: { mid: `m_${i}`, text },
                  intent: { name: intent },
                },
              ],
            },
          ],
        }
      : {
          uri: 'https://graph.facebook.com/v21.0/me/messages',
          method: 'POST',
          json: { recipient: { id: psid }, message: { text: 'Anything else?' } },
          responseBody: { recipient_id: psid, message_id: `m_${i}` },
        }
    // Messenger's send API answer carries no time: the receive time is its event time.
    return { platform: 'facebook', type: incoming ? 'incoming' : 'outgoing', body: JSON.stringify(body), ts }
  }
  if (slot < 80) {
    const slackTs = `${Math.floor(ts / 1000)}.${String((ts % 1000) * 1000).padStart(6, '0')}`
    const channel = `D-${user}`
    const body = incoming
      ? {
          team: { id: 'T1', name: 'Acme' },
          bot: { id: 'B1' },
          message: { type: 'message', channel, user: `U-${user}`, text, ts: slackTs, team: 'T1' },
          intent: { name: intent },
        }
      : { team: { id: 'T1' }, bot: { id: 'B1' }, message: { type: 'message', channel, text: 'On it.', ts: slackTs } }
    return { platform: 'slack', type: incoming ? 'incoming' : 'outgoing', body: JSON.stringify(body), ts }
  }
  if (slot < 88) {
    const event = {
      version: '1.0',
      session: {
        new: false,
        sessionId: `amzn1.echo-api.session.${pair}`,
        application: { applicationId: 'amzn1.ask.skill.1' },
        user: { userId: `amzn1.ask.account.${user}` },
      },
      request: {
        type: 'IntentRequest',
        requestId: `amzn1.echo-api.request.${pair}`,
        timestamp: new Date(ts).toISOString(),
        intent: { name: notHandled ? 'AMAZON.FallbackIntent' : 'OrderCoffee' },
      },
    }
    const body = incoming
      ? { event, intent: notHandled ? { name: 'NotHandled' } : undefined }
      : {
          event,
          response: { version: '1.0', response: { outputSpeech: { type: 'PlainText', text: 'One coffee?' } } },
        }
    return { platform: 'alexa', type: incoming ? 'incoming' : 'outgoing', body: JSON.stringify(body), ts }
  }
  if (slot < 95) {
    const [from, to] = incoming ? [user, 'BOT'] : ['BOT', user]
    const dm = {
      type: 'message_create',
      id: `dm${i}`,
      created_timestamp: String(ts),
      message_create: { target: { recipient_id: to }, sender_id: from, message_data: { text } },
    }
    const body = {
      text: incoming ? text : 'Thanks for writing.',
      userId: user,
      platformJson: { ...(incoming ? { for_user_id: 'BOT' } : {}), direct_message_events: [dm] },
    }
    return { platform: 'twitter', type: incoming ? 'incoming' : 'outgoing', body: JSON.stringify(body), ts }
  }
  if (incoming) {
    const body = { text, userId: user, intent: { name: intent }, platformJson: { timestamp: ts } }
    return { platform: 'universal', type: 'incoming', body: JSON.stringify(body), ts }
  }
  const body =
    pair % 2 === 0
      ? { type: 'revenueEvent', name: 'purchase', userId: user, amount: 5 + (pair % 40), referenceNumber: `R-${pair}` }
      : {
          type: 'customEvent',
          name: pair % 3 === 0 ? 'signup' : 'coupon.used',
          userId: user,
          extraInfo: { plan: 'pro' },
        }
  return {
    platform: 'universal',
    type: 'event',
    body: JSON.stringify({ ...body, platformJson: { timestamp: ts } }),
    ts,
  }
}
