import express, { type Request, type Response, type Router } from 'express'
import { principalOf, scopeOf } from '../access/auth'
import { RequestError } from '../errors'
import type { Actor, HandoffQueue } from '../live/handoff-queue'

/** Longest note accepted, in characters. */
const MAX_NOTE = 10_000

function required(value: unknown, path: string): string {
  if (typeof value !== 'string' || value.trim() === '')
    throw new RequestError(400, 'invalid_request', `\`${path}\` is required`, path)
  return value
}

function actorOf(res: Response): Actor {
  const p = principalOf(res)
  return { name: p.name, role: p.role }
}

function query(req: Request, name: string): string | undefined {
  const v = req.query[name]
  return typeof v === 'string' && v !== '' ? v : undefined
}

/**
 * The handoff queue's API, under `/api` (access, bot scope and audit by the gate, see
 * access-rules.ts):
 * - `GET /handoffs?bot=&state=waiting|assigned|all&thread=&mine=1` → `{ handoffs }`, oldest waiting first;
 * - `POST /handoffs/claim { bot, thread }` → the entry (409 `already_claimed` when someone else holds it);
 * - `POST /handoffs/release { bot, thread }` → `{ bot, thread, paused: false, released }`;
 * - `GET /notes?bot=&thread=` → `{ notes }`; `POST /notes { bot, thread, text }` → the note (201).
 *
 * @example app.use('/api', handoffApi({ queue }))
 */
export function handoffApi(deps: { queue: HandoffQueue }): Router {
  const api = express.Router()
  api.use(express.json({ limit: '64kb' }))

  api.get('/handoffs', async (req, res) => {
    const state = query(req, 'state') ?? 'all'
    if (state !== 'waiting' && state !== 'assigned' && state !== 'all')
      throw new RequestError(400, 'invalid_request', 'query `state` must be waiting, assigned or all', 'state')
    const mine = query(req, 'mine')
    const bot = query(req, 'bot')
    const thread = query(req, 'thread')
    const bots = scopeOf(res)
    const handoffs = await deps.queue.list({
      state,
      ...(bot === undefined ? {} : { bot }),
      ...(bots === undefined ? {} : { bots }),
      ...(thread === undefined ? {} : { thread }),
      ...(mine === '1' || mine === 'true' ? { assignee: principalOf(res).name } : {}),
    })
    res.json({ handoffs })
  })
  api.post('/handoffs/claim', async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>
    res.json(await deps.queue.claim(required(body.bot, 'bot'), required(body.thread, 'thread'), actorOf(res)))
  })
  api.post('/handoffs/release', async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>
    res.json(await deps.queue.release(required(body.bot, 'bot'), required(body.thread, 'thread'), actorOf(res)))
  })
  api.get('/notes', async (req, res) => {
    res.json({ notes: await deps.queue.notes(required(req.query.bot, 'bot'), required(req.query.thread, 'thread')) })
  })
  api.post('/notes', async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>
    const text = required(body.text, 'text')
    if (text.length > MAX_NOTE)
      throw new RequestError(400, 'invalid_request', `\`text\` must be at most ${MAX_NOTE} characters`, 'text')
    const note = await deps.queue.addNote(
      required(body.bot, 'bot'),
      required(body.thread, 'thread'),
      principalOf(res).name,
      text,
    )
    res.status(201).json(note)
  })
  return api
}
