/**
 * SECURITY.md, "Redaction and ignore lists": through every real adapter, `ignoreUserIds` keeps
 * the listed users' records in the process, and `redact` rewrites or drops records before
 * they leave it (the service sees only the result; drops are counted, not reported as errors).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Sink, startSink } from '../support/sink-server'
import { driveAll, KIK_SDK_UNSUPPORTED, type PlatformApis, startPlatformApis } from './drivers'
import { capturedTracker } from './support'

let sink: Sink
let apis: PlatformApis
beforeAll(async () => {
  sink = await startSink()
  apis = await startPlatformApis()
})
afterAll(async () => {
  await apis?.close()
  await sink?.close()
})

/** Every value of a `text` key anywhere in `value`. */
function texts(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) texts(v, out)
  else if (typeof value === 'object' && value !== null)
    for (const [k, v] of Object.entries(value)) {
      if (k === 'text' && typeof v === 'string') out.push(v)
      else texts(v, out)
    }
  return out
}

function redactTexts(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactTexts)
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, k === 'text' && typeof v === 'string' ? '[redacted]' : redactTexts(v)]),
  )
}

describe('ignoreUserIds', () => {
  it('keeps every record of the listed users in the process, on every platform', async () => {
    sink.clear()
    const ignored = ['U1', 'U2', 'alice', 'amzn1.ask.account.U1', 'c1']
    const { tracker, capture } = capturedTracker(sink.url, { ignoreUserIds: ignored })
    await driveAll(tracker, apis)
    await tracker.close()
    expect(tracker.stats().ignored).toBeGreaterThanOrEqual(8)
    const raw = sink.records.map((r) => r.raw).join('\n')
    for (const id of ignored) expect(raw).not.toContain(`"${id}"`)
    // Records of users not on the list still go: the second Alexa user, the second import row.
    expect(raw).toContain('amzn1.ask.account.U2')
    expect(raw).toContain('"c2"')
    expect(capture.errors.every((e) => !e.includes('ignored'))).toBe(true) // ignoring is not an error
  })

  it('also takes a predicate', async () => {
    sink.clear()
    const { tracker } = capturedTracker(sink.url, { ignoreUserIds: (userId) => userId.startsWith('amzn1.') })
    await driveAll(tracker, apis)
    await tracker.close()
    expect(sink.records.some((r) => r.platform === 'alexa')).toBe(false)
    expect(sink.records.some((r) => r.platform === 'slack')).toBe(true)
  })
})

describe('redact(body, info)', () => {
  it('rewrites records before they leave the process, and a null drops them (counted as redacted)', async () => {
    sink.clear()
    const { tracker, capture } = capturedTracker(sink.url, {
      redact: (body, info) => (info.platform === 'kik' ? null : (redactTexts(body) as typeof body)),
    })
    await driveAll(tracker, apis)
    await tracker.close()
    expect(sink.records.length).toBeGreaterThan(8)
    expect(sink.records.some((r) => r.platform === 'kik')).toBe(false)
    const all = sink.records.flatMap((r) => texts(r.body))
    expect(all.length).toBeGreaterThan(5)
    expect(new Set(all)).toEqual(new Set(['[redacted]']))
    expect(sink.records.map((r) => r.raw).join('\n')).not.toMatch(/hello back|imported one/)
    // kik's incoming and outgoing records (no kik records where its SDK cannot run: Node >= 23)
    expect(tracker.stats().droppedByReason.redacted).toBe(KIK_SDK_UNSUPPORTED ? 0 : 2)
    expect(capture.errors.some((e) => e.includes('dropped_redacted'))).toBe(false) // deliberate drops are not errors
    // The debug log shows the record as queued, so it shows the redacted body too.
    expect(capture.logs.filter((l) => l.includes('queued POST')).join('\n')).not.toContain('hello back')
  })
})
