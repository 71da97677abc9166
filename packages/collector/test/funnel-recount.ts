/**
 * The funnel report recounted from the stored messages, with its documented meaning: each user's
 * earliest way through, exact across hours; within one hour a step after the previous one is
 * taken at its latest time in that hour; every step in the range widened to whole hours.
 */
import type { RecordStore, StoredMessage } from '@convotrack/collector'
import { expect } from 'vitest'
import type { FunnelLine, FunnelStep } from '../src/reports/analytics-types'
import { DAY_MS } from '../src/reports/range'
import { eventKey, rec, traffic } from './rollup-contract'

const HOUR = 3_600_000

/** The step a message is: an incoming message's intent, an event's name. */
function stepOf(m: StoredMessage): string | null {
  if (m.direction === 'incoming' && m.intent !== null) return `intent:${m.intent}`
  if (m.event) return `event:${eventKey(m.event)}`
  return null
}

export function funnelOf(
  all: readonly StoredMessage[],
  q: { from?: number; to?: number | null; bot?: string },
  steps: readonly FunnelStep[],
): FunnelLine[] {
  const lo = Math.floor((q.from ?? 0) / HOUR) * HOUR
  const hi = q.to === undefined || q.to === null ? Number.POSITIVE_INFINITY : Math.ceil(q.to / HOUR) * HOUR
  // user → step → hour → [first, last]
  const users = new Map<string, Map<string, Map<number, [number, number]>>>()
  for (const m of all) {
    const step = stepOf(m)
    if (step === null || m.userId === '' || (q.bot !== undefined && m.bot !== q.bot)) continue
    const hour = Math.floor(m.ts / HOUR) * HOUR
    if (hour < lo || hour >= hi) continue
    const u = users.get(`${m.bot}\u0000${m.userId}`) ?? new Map<string, Map<number, [number, number]>>()
    users.set(`${m.bot}\u0000${m.userId}`, u)
    const s = u.get(step) ?? new Map<number, [number, number]>()
    u.set(step, s)
    const span = s.get(hour)
    s.set(hour, span ? [Math.min(span[0], m.ts), Math.max(span[1], m.ts)] : [m.ts, m.ts])
  }
  const reached = steps.map(() => 0)
  for (const u of users.values()) {
    let t = Number.NEGATIVE_INFINITY
    for (const [i, step] of steps.entries()) {
      let next = Number.POSITIVE_INFINITY
      for (const [hour, [first, last]] of u.get(`${step.kind}:${step.name}`) ?? [])
        if (i === 0) next = Math.min(next, first)
        else if (hour >= Math.floor(t / HOUR) * HOUR && last > t) next = Math.min(next, first > t ? first : last)
      if (next === Number.POSITIVE_INFINITY) break
      reached[i] = (reached[i] as number) + 1
      t = next
    }
  }
  return steps.map((s, i) => ({ step: `${s.kind}:${s.name}`, users: reached[i] as number }))
}

export const FUNNELS: FunnelStep[][] = [
  [
    { kind: 'intent', name: 'buy' },
    { kind: 'intent', name: 'track' },
    { kind: 'event', name: 'buy' },
  ],
  [
    { kind: 'intent', name: 'track' },
    { kind: 'intent', name: 'track' },
    { kind: 'intent', name: 'track' },
  ],
  [
    { kind: 'event', name: 'signup' },
    { kind: 'intent', name: 'help' },
    { kind: 'event', name: 'launch' },
    { kind: 'intent', name: 'buy' },
  ],
]

/** The busiest user's first three distinct steps, each later than the one before: a funnel someone completes. */
export function busiestWalk(all: readonly StoredMessage[]): FunnelStep[] {
  const byUser = new Map<string, StoredMessage[]>()
  for (const m of all)
    if (m.userId !== '' && stepOf(m) !== null)
      byUser.set(`${m.bot}\u0000${m.userId}`, [...(byUser.get(`${m.bot}\u0000${m.userId}`) ?? []), m])
  const busiest = [...byUser.values()].sort((a, b) => b.length - a.length)[0] ?? []
  const walk: FunnelStep[] = []
  let t = Number.NEGATIVE_INFINITY
  for (const m of [...busiest].sort((a, b) => a.ts - b.ts || a.id - b.id)) {
    const step = stepOf(m) as string
    if (m.ts <= t || walk.some((w) => `${w.kind}:${w.name}` === step) || walk.length === 3) continue
    walk.push({ kind: step.startsWith('intent:') ? 'intent' : 'event', name: step.slice(step.indexOf(':') + 1) })
    t = m.ts
  }
  return walk
}

/**
 * Every funnel of {@link FUNNELS} and the busiest user's walk over `ranges` (and all time,
 * open-ended, ending at each range's end, one bot) equals the recount.
 */
export async function expectFunnelRecount(
  store: RecordStore,
  all: readonly StoredMessage[],
  ranges: ReadonlyArray<{ from: number; to: number }>,
) {
  const walk = busiestWalk(all)
  // All time with an end too: the steps from the spans, bounded by `to`.
  const qs = [
    {},
    ...ranges,
    ...ranges.map((r) => ({ from: r.from })),
    ...ranges.map((r) => ({ to: r.to })),
    ...ranges.map((r) => ({ ...r, bot: 'shop' })),
  ]
  for (const q of qs)
    for (const steps of walk.length > 0 ? [...FUNNELS, walk] : FUNNELS) {
      const want = funnelOf(all, q, steps)
      expect(await store.funnel({ ...q, steps }), `${JSON.stringify(q)} ${JSON.stringify(steps)}`).toEqual(want)
    }
  // Someone went through the walk: the recount is not of empty funnels.
  if (walk.length > 0) expect(funnelOf(all, {}, walk).at(-1)?.users).toBeGreaterThan(0)
}

/** `traffic` moved `days` later in event time (and arrival), with keys of its own. */
export function trafficOn(days: number, n: number, seed: number) {
  return traffic(n, seed, `d${days}-`, `d${days}-`).map((item) => ({
    messages: item.messages,
    record: {
      ...item.record,
      eventTs: (item.record.eventTs ?? 0) + days * DAY_MS,
      receivedAt: item.record.receivedAt + days * DAY_MS,
    },
  }))
}

/** A universal incoming message (its intent) or a custom event (its name) of `user` at `ts`. */
export function stepItem(bot: string, user: string, ts: number, what: FunnelStep) {
  return what.kind === 'intent'
    ? rec(bot, 'universal', 'incoming', { userId: user, text: what.name, intent: { name: what.name } }, { eventTs: ts })
    : rec(bot, 'generic', 'event', { userId: user, type: 'customEvent', name: what.name }, { eventTs: ts })
}
