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
