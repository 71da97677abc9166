/**
 * The security suite's instruments: distinctive secrets, a capture of everything a tracker
 * can say (logger lines, onError, every emitter event, inspected errors with stack and cause),
 * and the grep that fails naming each secret and where it was found.
 */
import { inspect } from 'node:util'
import { createTracker, type Tracker, type TrackerOptions } from '@convotrack/core'
import type { ReceivedRecord } from '../support/sink-server'

/** One distinctive value per secret, so a hit can only come from that secret. */
export const SECRETS = {
  trackingKey: 'ctk_TRACKINGKEY_d41d8cd98f',
  pageToken: 'EAAG_PAGETOKEN_b7e23ec29a',
  appSecret: 'fbAPPSECRET_0c9b1f',
  kikKey: '5ec2e7a1-0b1c-4d2e-9f3a-7b8c9d0ecafe',
  slackVerificationToken: 'slackVERIFYTOKEN_a1b2c3',
  slackBotToken: 'xoxb-SLACKBOTTOKEN-77aa',
  slackSigningSecret: 'slackSIGNINGSECRET_99ff',
  alexaApiAccessToken: 'alexaAPIACCESSTOKEN_5e6f',
  alexaUserAccessToken: 'alexaUSERACCESSTOKEN_7a8b',
  alexaConsentToken: 'alexaCONSENTTOKEN_9c0d',
  webhookSecret: 'whsec_V0VCSE9PS1NFQ1JFVF9mb3JfdGVzdHNfMTIzNDU2',
} as const

export type SecretName = keyof typeof SECRETS

/** The base64 key inside the webhook secret, and its decoded bytes as text, are secrets too. */
export const WEBHOOK_KEY_PARTS = [
  SECRETS.webhookSecret.slice('whsec_'.length),
  Buffer.from(SECRETS.webhookSecret.slice('whsec_'.length), 'base64').toString('utf8'),
]

/** Platform credentials that core blanks unless `sendPlatformCredentials: true`. */
export const PLATFORM_SECRETS: SecretName[] = [
  'pageToken',
  'kikKey',
  'slackVerificationToken',
  'alexaApiAccessToken',
  'alexaUserAccessToken',
  'alexaConsentToken',
]

/** Everything a tracker said, as text. */
export class Capture {
  readonly logs: string[] = []
  readonly errors: string[] = []
  readonly events: string[] = []

  readonly logger = {
    log: (...args: unknown[]) => this.logs.push(args.map(text).join(' ')),
    warn: (...args: unknown[]) => this.logs.push(args.map(text).join(' ')),
  }

  /** An `onError` that keeps the error whole: message, stack, cause, own fields, JSON, and the record. */
  readonly onError = (error: unknown, record?: unknown) => {
    this.errors.push(errorText(error), text(record))
  }

  /** Listens to every event of the tracker. */
  listen(tracker: Tracker): void {
    tracker.on('error', (e, r) => this.events.push(`error ${errorText(e)} ${text(r)}`))
    tracker.on('retry', (e, r, d) => this.events.push(`retry ${errorText(e)} ${text(r)} ${d}`))
    tracker.on('dropped', (reason, r) => this.events.push(`dropped ${reason} ${text(r)}`))
    tracker.on('sent', (r, s) => this.events.push(`sent ${text(r)} ${s}`))
  }

  all(): string[] {
    return [...this.logs, ...this.errors, ...this.events]
  }
}

function text(value: unknown): string {
  if (typeof value === 'string') return value
  try {
    return `${JSON.stringify(value)} ${inspect(value, { depth: 8 })}`
  } catch {
    return inspect(value, { depth: 8 })
  }
}

/** An error as every consumer could see it: inspect (stack, cause chain, own props), JSON, String. */
export function errorText(error: unknown): string {
  let json = ''
  try {
    json = JSON.stringify(error)
  } catch {
    // circular cause: inspect covers it
  }
  return `${String(error)}\n${(error as Error)?.stack ?? ''}\n${json}\n${inspect(error, { depth: 8, showHidden: true })}`
}

/** A tracker as the security tests run it: the test key, debug on, everything captured. */
export function capturedTracker(
  baseUrl: string,
  options: Partial<TrackerOptions> & { defaultOnError?: boolean } = {},
): { tracker: Tracker; capture: Capture } {
  const capture = new Capture()
  const { defaultOnError, ...rest } = options
  const tracker = createTracker({
    apiKey: SECRETS.trackingKey,
    baseUrl,
    debug: true,
    logger: capture.logger,
    retry: { maxAttempts: 2, minDelayMs: 5, maxDelayMs: 20 },
    timeoutMs: 1_000,
    // Without onError the default one writes to the logger: both paths are covered.
    ...(defaultOnError ? {} : { onError: capture.onError }),
    ...rest,
  })
  capture.listen(tracker)
  return { tracker, capture }
}

/** Where each secret was found in `haystacks` (name → first place), for a precise failure message. */
export function findSecrets(
  haystacks: Record<string, string[]>,
  names: readonly SecretName[] = Object.keys(SECRETS) as SecretName[],
  extra: Record<string, string> = {},
): string[] {
  const needles: Array<[string, string]> = [
    ...names.map((n) => [n, SECRETS[n]] as [string, string]),
    ...Object.entries(extra),
  ]
  const hits: string[] = []
  for (const [name, secret] of needles)
    for (const [where, list] of Object.entries(haystacks)) {
      const i = list.findIndex((s) => s.includes(secret))
      if (i >= 0) {
        const s = list[i] as string
        const at = s.indexOf(secret)
        hits.push(`${name} in ${where}[${i}]: …${s.slice(Math.max(0, at - 80), at + secret.length + 40)}…`)
      }
    }
  return hits
}

/**
 * What the tracking service saw of each record, apart from the `apiKey` query parameter (the
 * one place the tracking key belongs): raw body, every other query parameter, every header.
 */
export function wireText(records: ReceivedRecord[]): string[] {
  return records.map((r) => {
    const query = [...r.query.entries()].filter(([k]) => k !== 'apiKey').map(([k, v]) => `${k}=${v}`)
    return `${r.raw}\n${query.join('&')}\n${JSON.stringify(r.headers)}`
  })
}
