import type { PendingSummary } from './transport-types'

/** What was still undelivered when the tracker closed or the process ended. */
export interface UndeliveredFacts extends PendingSummary {
  /** Records adapters still held (a turn not finished, a lookup not answered). */
  held: number
  /** Records dropped earlier because the queue was full. */
  queueFull: number
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`

/**
 * The loss in words, for `close()` and the exit report: how many records, of how many
 * conversations, and why.
 *
 * @example describeUndelivered(facts) // '20 records undelivered (of 20 conversations): the service is unreachable'
 */
export function describeUndelivered(f: UndeliveredFacts): string {
  const total = f.records + f.held
  const why: string[] = []
  if (f.records > 0) {
    if (f.unreachable) why.push('the service is unreachable')
    else if (f.retrying > 0) why.push(`${f.retrying} still retrying (the service answered with errors)`)
    const rest = f.unreachable ? 0 : f.records - f.retrying
    if (rest > 0) why.push(`${rest} not answered yet`)
  }
  if (f.held > 0) why.push(`${f.held} still held by an adapter (a turn or a lookup not finished)`)
  let text = `${plural(total, 'record')} undelivered`
  if (f.records > 0) text += ` (of ${plural(f.conversations, 'conversation')})`
  if (why.length > 0) text += `: ${why.join(', ')}`
  if (f.queueFull > 0) text += `; ${plural(f.queueFull, 'more record')} dropped earlier because the queue was full`
  return text
}
