import type { Request } from 'express'
import type { Role } from '../options'

/**
 * Who may call a route:
 * - `probe`: anyone, no checks at all (`/healthz`, `/readyz`);
 * - `public`: anyone, but only under an allowed `Host` (the login page);
 * - `bot-key`: the bot's tracking key (checked by the route itself);
 * - `signature`: a platform signature (checked by the route itself);
 * - `metrics`: `auth.metricsToken` when `auth` is set;
 * - a role: a signed-in user or token with at least that role.
 */
export type Access = 'probe' | 'public' | 'bot-key' | 'signature' | 'metrics' | Role

/** What an audited action writes to the audit log (the actor and time are added). */
export interface AuditDraft {
  action: string
  bot: string | null
  target: string | null
  detail: Record<string, unknown> | null
}

/** One line of {@link ROUTE_RULES}. */
export interface RouteRule {
  method: 'GET' | 'POST' | 'DELETE'
  /** Express path; `:name` matches one segment. `/*` is the dashboard's static files (everything outside /api). */
  path: string
  access: Access
  /**
   * Where the bot the request reads or acts on is named: `query` (`?bot=`), `body` (`bot`),
   * `record` (the bot of record `:id`), `page` (a Messenger page's bot). Out of the caller's
   * scope → 403. Without a named bot, list routes are filtered to the caller's bots.
   */
  bot?: 'query' | 'body' | 'record' | 'page'
  /** Written to the audit log when the action succeeds: one line, or one per bot it touched. */
  audit?: (req: Request, result: Record<string, unknown>) => AuditDraft | AuditDraft[]
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null)
const body = (req: Request) => (req.body ?? {}) as Record<string, unknown>

/**
 * Every route the collector answers, with the access it needs. A route that is not here is
 * refused (404) when `auth` is set, and `access-rules.test.ts` fails.
 */
export const ROUTE_RULES: readonly RouteRule[] = [
  { method: 'GET', path: '/healthz', access: 'probe' },
  { method: 'GET', path: '/readyz', access: 'probe' },
  { method: 'GET', path: '/metrics', access: 'metrics' },
  { method: 'POST', path: '/track', access: 'bot-key' },
  { method: 'POST', path: '/track/batch', access: 'bot-key' },
  { method: 'POST', path: '/v1/traces', access: 'bot-key' },
  { method: 'GET', path: '/messenger/webhook', access: 'signature' },
  { method: 'POST', path: '/messenger/webhook', access: 'signature' },
  { method: 'GET', path: '/login', access: 'public' },
  { method: 'POST', path: '/login', access: 'public' },
  { method: 'POST', path: '/logout', access: 'public' },
  { method: 'GET', path: '/login.js', access: 'public' },
  { method: 'GET', path: '/style.css', access: 'public' },
  { method: 'GET', path: '/api/me', access: 'viewer' },
  { method: 'GET', path: '/api/bots', access: 'viewer' },
  { method: 'GET', path: '/api/stats', access: 'viewer', bot: 'query' },
  { method: 'GET', path: '/api/stream', access: 'viewer', bot: 'query' },
  { method: 'GET', path: '/api/messages', access: 'viewer', bot: 'query' },
  { method: 'GET', path: '/api/conversations', access: 'viewer', bot: 'query' },
  { method: 'GET', path: '/api/transcript', access: 'viewer', bot: 'query' },
  { method: 'GET', path: '/api/records/:id', access: 'viewer', bot: 'record' },
  { method: 'GET', path: '/api/reports/not-handled', access: 'viewer', bot: 'query' },
  { method: 'GET', path: '/api/reports/intents', access: 'viewer', bot: 'query' },
  { method: 'GET', path: '/api/reports/events', access: 'viewer', bot: 'query' },
  { method: 'GET', path: '/api/reports/segments', access: 'viewer', bot: 'query' },
  { method: 'GET', path: '/api/reports/timeline', access: 'viewer', bot: 'query' },
  { method: 'GET', path: '/api/reports/usage', access: 'viewer', bot: 'query' },
  { method: 'GET', path: '/api/audit', access: 'viewer', bot: 'query' },
  {
    method: 'POST',
    path: '/api/pause',
    access: 'operator',
    bot: 'body',
    audit: (req) => ({
      action: body(req).paused === true ? 'pause' : 'resume',
      bot: str(body(req).bot),
      target: str(body(req).thread),
      detail: null,
    }),
  },
  {
    method: 'POST',
    path: '/api/operator-message',
    access: 'operator',
    bot: 'body',
    audit: (req, result) => ({
      action: 'operator-message',
      bot: str(body(req).bot),
      target: str(body(req).thread),
      // sentAt: when the dashboard began the send (the bot may track its copy before it answers).
      detail: { text: str(body(req).text), ...(typeof result.sentAt === 'number' ? { sentAt: result.sentAt } : {}) },
    }),
  },
  { method: 'GET', path: '/api/handoffs', access: 'viewer', bot: 'query' },
  {
    method: 'POST',
    path: '/api/handoffs/claim',
    access: 'operator',
    bot: 'body',
    audit: (req) => ({ action: 'handoff.claim', bot: str(body(req).bot), target: str(body(req).thread), detail: null }),
  },
  {
    method: 'POST',
    path: '/api/handoffs/release',
    access: 'operator',
    bot: 'body',
    audit: (req, result) => ({
      action: 'handoff.release',
      bot: str(body(req).bot),
      target: str(body(req).thread),
      detail: typeof result.released === 'string' ? { assignee: result.released } : null,
    }),
  },
  { method: 'GET', path: '/api/notes', access: 'viewer', bot: 'query' },
  {
    method: 'POST',
    path: '/api/notes',
    access: 'operator',
    bot: 'body',
    // The note's text stays in the notes table (erasure removes it there), not in the audit log.
    audit: (req, result) => ({
      action: 'note.add',
      bot: str(body(req).bot),
      target: str(body(req).thread),
      detail: typeof result.id === 'number' ? { note: result.id } : null,
    }),
  },
  { method: 'GET', path: '/api/messenger-pages', access: 'admin' },
  {
    method: 'POST',
    path: '/api/messenger-pages',
    access: 'admin',
    bot: 'page',
    // A page moved from one bot to another is filed under both.
    audit: (req, result) => [
      { action: 'messenger-page', bot: str(result.bot), target: str(body(req).pageId), detail: null },
      ...(typeof result.movedFrom === 'string'
        ? [
            {
              action: 'messenger-page-moved',
              bot: result.movedFrom,
              target: str(body(req).pageId),
              detail: { movedTo: str(result.bot) },
            },
          ]
        : []),
    ],
  },
  {
    method: 'DELETE',
    path: '/api/users/:userId',
    access: 'admin',
    bot: 'query',
    audit: (req, result) => ({
      action: 'erase',
      bot: str(req.query.bot),
      target: str(req.params.userId),
      detail: { removed: result.removed },
    }),
  },
  { method: 'GET', path: '/api/export', access: 'admin', bot: 'query' },
  { method: 'GET', path: '/*', access: 'viewer' },
]

const ROLE_RANK: Record<Role, number> = { viewer: 1, operator: 2, admin: 3 }

/** True when `role` is at least `needed`. */
export function roleAllows(role: Role, needed: Role): boolean {
  return ROLE_RANK[role] >= ROLE_RANK[needed]
}

/** True for the three roles. */
export function isRole(v: unknown): v is Role {
  return v === 'viewer' || v === 'operator' || v === 'admin'
}

/** Express routes ignore case (`/Api/export` reaches `/api/export`), so literal segments are compared ignoring case too. */
function matches(pattern: string, path: string): Record<string, string> | undefined {
  if (pattern === '/*') {
    const lower = path.toLowerCase()
    return lower.startsWith('/api/') || lower === '/api' ? undefined : {}
  }
  const want = pattern.split('/')
  const got = path.split('/')
  if (want.length !== got.length) return undefined
  const params: Record<string, string> = {}
  for (let i = 0; i < want.length; i++) {
    const w = want[i] as string
    const g = got[i] as string
    if (w.startsWith(':')) {
      if (g === '') return undefined
      try {
        params[w.slice(1)] = decodeURIComponent(g)
      } catch {
        return undefined
      }
    } else if (w !== g.toLowerCase()) return undefined
  }
  return params
}

/** The rule for a request (HEAD counts as GET), with its path parameters; exact paths win over `/*`. */
export function findRule(
  method: string,
  path: string,
): { rule: RouteRule; params: Record<string, string> } | undefined {
  const m = method === 'HEAD' ? 'GET' : method
  let fallback: { rule: RouteRule; params: Record<string, string> } | undefined
  for (const rule of ROUTE_RULES) {
    if (rule.method !== m) continue
    const params = matches(rule.path, path)
    if (!params) continue
    if (rule.path === '/*') fallback ??= { rule, params }
    else return { rule, params }
  }
  return fallback
}
