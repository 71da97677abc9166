import type { Pending } from './transport-types'

/** Limits a service advertises in the `Convotrack-Batch` header of its `/track` answers. */
export interface BatchLimits {
  maxRecords: number
  maxBytes: number
}

/** Parses `max-records=500, max-bytes=4194304`; undefined when unreadable. */
export function parseBatchHeader(value: string | string[] | undefined): BatchLimits | undefined {
  const v = Array.isArray(value) ? value[0] : value
  if (!v) return undefined
  const records = /max-records\s*=\s*(\d+)/i.exec(v)
  const bytes = /max-bytes\s*=\s*(\d+)/i.exec(v)
  const maxRecords = records ? Number(records[1]) : 0
  const maxBytes = bytes ? Number(bytes[1]) : 0
  if (!(maxRecords >= 1) || !(maxBytes >= 64)) return undefined
  return { maxRecords: Math.min(maxRecords, 10_000), maxBytes }
}

/** The envelope around one record in a batch, before its body (platform/type/v are plain tokens). */
export function recordPrefix(rec: Pending): string {
  return `{"platform":"${rec.platform}","type":"${rec.type}","v":"${rec.v}","idempotencyKey":"${rec.key}","body":`
}

/** Bytes one record takes in a batch body (its envelope, body and separator). */
export function recordBytes(rec: Pending): number {
  if (rec.bytes === 0) rec.bytes = Buffer.byteLength(rec.body) + 96 + rec.key.length
  return rec.bytes
}

/** The batch body, by concatenating the already-serialized record bodies (no re-stringify). */
export function batchBody(records: readonly Pending[]): string {
  let out = '{"records":['
  for (let i = 0; i < records.length; i++) {
    const rec = records[i] as Pending
    if (i > 0) out += ','
    out += `${recordPrefix(rec)}${rec.body}}`
  }
  return `${out}]}`
}

/** One entry of a batch answer. */
export interface BatchResult {
  status: 'accepted' | 'duplicate' | 'refused'
  error?: { code?: string; message?: string; path?: string }
}

/** The `results` of a batch answer, or undefined when the answer is not one entry per record. */
export function parseBatchResults(text: string, count: number): BatchResult[] | undefined {
  try {
    const parsed = JSON.parse(text) as { results?: unknown }
    const results = parsed?.results
    if (!Array.isArray(results) || results.length !== count) return undefined
    for (const r of results)
      if (!r || typeof r !== 'object' || !['accepted', 'duplicate', 'refused'].includes((r as BatchResult).status))
        return undefined
    return results as BatchResult[]
  } catch {
    return undefined
  }
}
