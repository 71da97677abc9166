/**
 * A small stand-in for a third-party customer-support system (spec 4.4): an Express API with
 * token auth and paginated tickets and messages, like the help desks an import pulls from.
 * Customers' messages get an automatic answer from the "agent" side.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'

/** The few parts of Express 5 used here, typed structurally (@types/express is not a dependency of this example). */
interface Request extends IncomingMessage {
  originalUrl: string
  query: Record<string, unknown>
  params: Record<string, string>
}
interface Response extends ServerResponse {
  status(code: number): Response
  json(body: unknown): void
}
interface App {
  use(handler: (req: Request, res: Response, next: () => void) => void): void
  get(path: string, handler: (req: Request, res: Response) => void): void
  listen(port: number, host: string): Server
}
const express = createRequire(import.meta.url)('express') as () => App

export interface HelpdeskMessage {
  id: number
  ticket_id: number
  author: { type: 'customer' | 'agent'; id: string; name: string }
  body: string
  created_at: string
}

export interface HelpdeskTicket {
  id: number
  subject: string
  customer: { id: string; name: string }
  status: 'open' | 'solved'
}

export interface Helpdesk {
  url: string
  token: string
  /** Requests served, by path (to show the pagination at work). */
  requests: string[]
  /** A customer writes (a new ticket per customer, then the same one); the auto-responder answers. */
  write(customerId: string, text: string): HelpdeskMessage[]
  close(): Promise<void>
}

const PER_PAGE_MAX = 50

/** Starts the help desk on 127.0.0.1 with a few tickets of history. */
export async function startHelpdesk(options: { perPage?: number } = {}): Promise<Helpdesk> {
  const token = 'hd_example_token'
  const perPage = Math.min(options.perPage ?? 3, PER_PAGE_MAX)
  const tickets: HelpdeskTicket[] = []
  const messages: HelpdeskMessage[] = []
  const requests: string[] = []
  let clock = Date.parse('2024-05-02T09:00:00Z')

  const add = (ticket: HelpdeskTicket, type: 'customer' | 'agent', body: string): HelpdeskMessage => {
    clock += 90_000
    const author = type === 'customer' ? { type, ...ticket.customer } : { type, id: 'agent-7', name: 'Sam (support)' }
    const m: HelpdeskMessage = {
      id: messages.length + 1,
      ticket_id: ticket.id,
      author,
      body,
      created_at: new Date(clock).toISOString(),
    }
    messages.push(m)
    return m
  }
  const open = (customer: { id: string; name: string }, subject: string): HelpdeskTicket => {
    const t: HelpdeskTicket = { id: 1000 + tickets.length + 1, subject, customer, status: 'open' }
    tickets.push(t)
    return t
  }
  const autoAnswer = (text: string): string =>
    /refund/i.test(text)
      ? 'I have started your refund; it reaches your card in 3-5 days.'
      : /where|order|parcel|late/i.test(text)
        ? 'Your parcel is with the courier and arrives tomorrow.'
        : 'Thanks for writing! An agent will look at this shortly.'

  // History: a few solved tickets.
  const history: Array<[{ id: string; name: string }, string, string[]]> = [
    [
      { id: 'cus_ana', name: 'Ana' },
      'Late parcel',
      ['Where is my parcel? It is late.', 'Can I get a refund if it does not come?'],
    ],
    [{ id: 'cus_ben', name: 'Ben' }, 'Refund', ['I want a refund for order 88.']],
    [{ id: 'cus_cleo', name: 'Cleo' }, 'Hello', ['Hi, do you ship to Norway?']],
  ]
  for (const [customer, subject, lines] of history) {
    const t = open(customer, subject)
    for (const line of lines) {
      add(t, 'customer', line)
      add(t, 'agent', autoAnswer(line))
    }
    t.status = 'solved'
  }

  const app = express()
  app.use((req, res, next) => {
    requests.push(req.originalUrl)
    if (req.headers.authorization !== `Bearer ${token}`) {
      res.status(401).json({ error: 'invalid token' })
      return
    }
    next()
  })
  const page = <T>(items: T[], query: Record<string, unknown>, path: string) => {
    const n = Math.max(1, Number(query.page ?? 1) || 1)
    const size = Math.min(PER_PAGE_MAX, Math.max(1, Number(query.per_page ?? perPage) || perPage))
    const slice = items.slice((n - 1) * size, n * size)
    const more = n * size < items.length
    return { data: slice, next_page: more ? `${path}?page=${n + 1}&per_page=${size}` : null }
  }
  app.get('/api/v2/tickets', (req, res) => {
    res.json(page(tickets, req.query, '/api/v2/tickets'))
  })
  app.get('/api/v2/tickets/:id/messages', (req, res) => {
    const id = Number(req.params.id)
    const since = Number(req.query.since_id ?? 0)
    if (!tickets.some((t) => t.id === id)) {
      res.status(404).json({ error: 'no such ticket' })
      return
    }
    const list = messages.filter((m) => m.ticket_id === id && m.id > since)
    const out = page(list, req.query, `/api/v2/tickets/${id}/messages`)
    if (out.next_page && since) out.next_page += `&since_id=${since}`
    res.json(out)
  })

  const server = app.listen(0, '127.0.0.1')
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve)
    server.once('error', reject)
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    requests,
    write(customerId, text) {
      const ticket =
        tickets.find((t) => t.customer.id === customerId && t.status === 'open') ??
        open({ id: customerId, name: customerId }, text.slice(0, 40))
      return [add(ticket, 'customer', text), add(ticket, 'agent', autoAnswer(text))]
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
