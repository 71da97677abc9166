// What the analytics views share: the query of a report read (bot filter and the range picker's
// range), and the CSV download link of a report (the same rows as the view).
import { q } from './api.js'
import { h } from './dom.js'
import { withRange } from './range.js'
import { state } from './state.js'

/** `?bot=…&from=…&to=…&tz=…` plus `extra`, for a report path. */
export const reportQuery = (extra = {}) => q(withRange({ bot: state.bot, ...extra }))

/** A "Download CSV" link of a report (`?format=csv` of the same query). */
export function csvLink(path, name, extra = {}) {
  return h(
    'a',
    {
      class: 'csv-link',
      href: `${path}${reportQuery({ ...extra, format: 'csv' })}`,
      download: `${name}.csv`,
      'data-testid': `csv-${name}`,
    },
    'Download CSV',
  )
}

/**
 * What a view shows of a report counted off the request path: while it is first counted (202),
 * a line saying so (`text`) in place of the figures; with an earlier answer (`refreshing`), a
 * line with its time above them; '' otherwise. `testid`: the view's name (`funnel-preparing`,
 * `funnel-as-of`).
 */
export function countingNote(body, testid, text) {
  if (body.preparing) return h('p', { class: 'empty', 'data-testid': `${testid}-preparing` }, text)
  if (body.refreshing)
    return h(
      'p',
      { class: 'muted', 'data-testid': `${testid}-as-of` },
      `As of ${new Date(body.asOf).toLocaleTimeString()}; newer figures are being counted.`,
    )
  return ''
}
