/**
 * A real SQLite store whose funnel the test holds back (`held`) or fails (`fault`), counting
 * its computations and the statement bounds they were given: the funnel route's answers computed
 * off the request path (answer-cache.ts), seen from the route and the dashboard.
 */
import { type RecordStore, SqliteRecordStore } from '@convotrack/collector'

type FunnelFilter = Parameters<RecordStore['funnel']>[0]

/** A store whose funnel waits for the test while `held`, counting its computations. */
export function heldStore() {
  const inner = new SqliteRecordStore(':memory:')
  const state = {
    held: false,
    calls: 0,
    fault: undefined as Error | undefined,
    releases: [] as Array<() => void>,
    budgets: [] as Array<number | undefined>,
  }
  const store = new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === 'funnel')
        return async (filter: FunnelFilter) => {
          state.calls++
          state.budgets.push(filter.budgetMs)
          if (state.fault) throw state.fault
          if (state.held) await new Promise<void>((r) => state.releases.push(r))
          return target.funnel(filter)
        }
      return Reflect.get(target, prop, receiver)
    },
  })
  const release = () => {
    for (const r of state.releases.splice(0)) r()
  }
  return { store, state, release }
}
