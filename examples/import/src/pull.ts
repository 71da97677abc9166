/**
 * Pulls conversation history out of the help desk with its own API (spec 4.4: "the client
 * reads conversation data from that system with that system's own API"), page by page, as a
 * stream of flat rows for `importRecords`.
 */
import type { HelpdeskMessage, HelpdeskTicket } from './helpdesk'

/** One message, flattened for the import mapping. */
export interface HelpdeskRow {
  message_id: number
  ticket: string
  subject: string
  customer: string
  /** Customers' messages are incoming; the support side's are outgoing. */
  direction: 'incoming' | 'outgoing'
  author: string
  body: string
  created_at: string
}

/** The import mapping of a {@link HelpdeskRow}: the human is always the customer (spec: userId is never the bot's). */
export const HELPDESK_MAPPING = {
  text: 'body',
  userId: 'customer',
  conversationId: 'ticket',
  timestamp: 'created_at',
  direction: 'direction',
}

/** Every message of every ticket (newer than `sinceId`), following `next_page` links. */
export async function* pullHelpdesk(baseUrl: string, token: string, sinceId = 0): AsyncGenerator<HelpdeskRow> {
  const get = async <T>(path: string): Promise<{ data: T[]; next_page: string | null }> => {
    const res = await fetch(new URL(path, baseUrl), { headers: { authorization: `Bearer ${token}` } })
    if (!res.ok) throw new Error(`help desk answered ${res.status} for ${path}`)
    return (await res.json()) as { data: T[]; next_page: string | null }
  }
  for (let next: string | null = '/api/v2/tickets'; next; ) {
    const tickets: { data: HelpdeskTicket[]; next_page: string | null } = await get<HelpdeskTicket>(next)
    for (const ticket of tickets.data) {
      for (let page: string | null = `/api/v2/tickets/${ticket.id}/messages?since_id=${sinceId}`; page; ) {
        const msgs: { data: HelpdeskMessage[]; next_page: string | null } = await get<HelpdeskMessage>(page)
        for (const m of msgs.data) yield toRow(ticket, m)
        page = msgs.next_page
      }
    }
    next = tickets.next_page
  }
}

function toRow(ticket: HelpdeskTicket, m: HelpdeskMessage): HelpdeskRow {
  return {
    message_id: m.id,
    ticket: `T-${ticket.id}`,
    subject: ticket.subject,
    customer: ticket.customer.id,
    direction: m.author.type === 'customer' ? 'incoming' : 'outgoing',
    author: m.author.name,
    body: m.body,
    created_at: m.created_at,
  }
}
