// Every view of the dashboard. A view is one module exporting { name, load(params), refresh?(),
// onResize?() } and a `<section id="view-<name>" class="view">` in index.html (plus its nav
// link); add it here and the router shows it at #/<name>.
import audience from './audience.js'
import audit from './audit.js'
import clusters from './clusters.js'
import connect from './connect.js'
import conversations from './conversations.js'
import events from './events.js'
import funnel from './funnel.js'
import handoffs from './handoffs.js'
import intents from './intents.js'
import live from './live.js'
import notHandled from './not-handled.js'
import overview from './overview.js'
import paths from './paths.js'
import retention from './retention.js'
import search from './search.js'
import usage from './usage.js'

export const VIEWS = [
  overview,
  live,
  conversations,
  handoffs,
  notHandled,
  clusters,
  intents,
  retention,
  paths,
  funnel,
  events,
  usage,
  audience,
  connect,
  audit,
  search,
]
