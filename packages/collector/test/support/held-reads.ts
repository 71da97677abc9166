/**
 * A real SQLite store whose funnel and overview the test holds back (`held`) or fails (`fault`), counting
 * its computations and the statement bounds they were given: the funnel route's answers computed
 * off the request path (answer-cache.ts), seen from the route and the dashboard.
 */
import { type RecordStore, SqliteRecordStore } from '@convotrack/collector'

/** The reads the route counts off the request path. */
const HELD = new Set(['funnel', 'overview'])

/** A store whose funnel and overview wait for the test while `held`, counting their computations. */
export function heldStore() {
  const inner = new SqliteRecordStore(':memory:')
  const state = {
    held: false,
    calls: { funnel: 0, overview: 0 } as Record<string, number>,
    fault: undefined as Error | undefined,
    releases: [] as Array<() => void>,
    budgets: [] as Array<number | undefined>,
  }
  const store = new Proxy(inner, {
    get(target, prop, receiver) {
      if (typeof prop === 'string' && HELD.has(prop))
        return async (filter: { budgetMs?: number }) => {
          state.calls[prop] = (state.calls[prop] ?? 0) + 1
          state.budgets.push(filter.budgetMs)
          if (state.fault) throw state.fault
          if (state.held) await new Promise<void>((r) => state.releases.push(r))
          return (target[prop as 'funnel'] as (f: unknown) => Promise<unknown>).call(target, filter)
        }
      return Reflect.get(target, prop, receiver)
    },
  })
  const release = () => {
    for (const r of state.releases.splice(0)) r()
  }
  return { store: store as RecordStore, state, release }
}
