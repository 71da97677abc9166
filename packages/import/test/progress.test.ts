import { formatProgress, type ImportProgress, progressPrinter } from '@convotrack/import'
import { describe, expect, it } from 'vitest'

const at = (sent: number, elapsedMs: number, total = 9975): ImportProgress => ({
  total,
  sent,
  failed: 0,
  skipped: 0,
  inFlight: 8,
  ratePerSecond: 612.4,
  etaSeconds: (total - sent) / 612.4,
  elapsedMs,
})

function fakeStream(isTTY: boolean) {
  const chunks: string[] = []
  return {
    chunks,
    stream: { isTTY, write: (c: string) => chunks.push(c) > 0 } as unknown as NodeJS.WritableStream & {
      isTTY: boolean
    },
  }
}

describe('progress', () => {
  it('formats records, percentage, rate and ETA', () => {
    expect(formatProgress(at(4982, 8000), true)).toBe(
      '[############------------] 4,982/9,975 49% · 612 rec/s · ETA 0:08',
    )
    expect(formatProgress(at(4982, 8000), false)).toBe('progress: 4982/9975 (49%), 612 rec/s, ETA 0:08')
    expect(formatProgress({ ...at(10, 100), total: undefined, etaSeconds: undefined, failed: 2 }, false)).toBe(
      'progress: 12 records, 612 rec/s, 2 failed',
    )
  })

  it('redraws one line on a terminal', () => {
    const { chunks, stream } = fakeStream(true)
    const p = progressPrinter({ stream })
    p.update(at(100, 250))
    p.update(at(200, 500))
    p.done()
    expect(chunks).toEqual([
      `\r\x1b[2K${formatProgress(at(100, 250), true)}`,
      `\r\x1b[2K${formatProgress(at(200, 500), true)}`,
      '\n',
    ])
  })

  it('prints plain lines every few seconds elsewhere (logs, CI), and the last state at the end', () => {
    const { chunks, stream } = fakeStream(false)
    const p = progressPrinter({ stream, intervalMs: 2000 })
    for (let ms = 0; ms <= 4500; ms += 250) p.update(at(ms, ms))
    p.done()
    expect(chunks).toEqual([
      `${formatProgress(at(0, 0), false)}\n`,
      `${formatProgress(at(2000, 2000), false)}\n`,
      `${formatProgress(at(4000, 4000), false)}\n`,
      `${formatProgress(at(4500, 4500), false)}\n`,
    ])
  })
})
