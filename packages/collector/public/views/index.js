// Every view of the dashboard. A view is one module exporting { name, load(params), refresh?(),
// onResize?() } and a `<section id="view-<name>" class="view">` in index.html (plus its nav
// link); add it here and the router shows it at #/<name>.
import audience from './audience.js'
import audit from './audit.js'
import connect from './connect.js'
import conversations from './conversations.js'
import events from './events.js'
import handoffs from './handoffs.js'
import intents from './intents.js'
import live from './live.js'
import notHandled from './not-handled.js'
import usage from './usage.js'

export const VIEWS = [live, conversations, handoffs, notHandled, intents, events, usage, audience, connect, audit]
