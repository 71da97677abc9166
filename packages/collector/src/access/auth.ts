import { createHash, timingSafeEqual } from 'node:crypto'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import express, { type NextFunction, type Request, type RequestHandler, type Response, type Router } from 'express'
import type { Logger } from 'pino'
import { RequestError } from '../errors'
import type { LiveFeed } from '../live/live-feed'
import type { AuthOptions, AuthToken, AuthUser, Role } from '../options'
import type { RecordStore } from '../store/store'
import { type AuditDraft, findRule, isRole, type RouteRule, roleAllows } from './access-rules'
import { LoginThrottle } from './login-throttle'
import { isPasswordHash, verifyPassword } from './password'
import { SESSION_COOKIE, type SessionClaims, SessionSigner } from './sessions'

/** Who is making a request. */
export interface Principal {
  name: string
  role: Role
  /** Bot names in scope, or '*' for every bot. */
  bots: readonly string[] | '*'
  /** How they proved it; `none` when the collector runs without `auth` (loopback). */
  via: 'session' | 'token' | 'proxy' | 'none'
  session?: SessionClaims
}

const LOCAL: Principal = Object.freeze({ name: 'local', role: 'admin', bots: '*', via: 'none' }) as Principal

/** The signed-in principal of a request (set by the access gate). */
export function principalOf(res: Response): Principal {
  return (res.locals.principal as Principal | undefined) ?? LOCAL
}

/** The caller's bots for list queries: undefined = every bot. */
export function scopeOf(res: Response): readonly string[] | undefined {
  const bots = principalOf(res).bots
  return bots === '*' ? undefined : bots
}

/** True when the caller may see `bot`. */
export function inScope(res: Response, bot: string): boolean {
  const bots = principalOf(res).bots
  return bots === '*' || bots.includes(bot)
}

const scopeList = (bots: unknown, where: string): readonly string[] | '*' => {
  if (!Array.isArray(bots) || bots.length === 0 || bots.some((b) => typeof b !== 'string' || b === ''))
    throw new TypeError(`${where}.bots must be a non-empty list of bot names, or ['*']`)
  return bots.includes('*') ? '*' : [...bots]
}

/**
 * Checks `auth` options and fails with the field and rule at fault.
 *
 * @example validateAuth({ users: [{ name: 'ada', passwordHash, role: 'admin', bots: ['*'] }] })
 */
export function validateAuth(auth: AuthOptions): void {
  if (typeof auth !== 'object' || auth === null) throw new TypeError('auth must be an object')
  const names = new Set<string>()
  for (const [i, u] of (auth.users ?? []).entries()) {
    const where = `auth.users[${i}]`
    if (typeof u?.name !== 'string' || u.name === '') throw new TypeError(`${where}.name must be a non-empty string`)
    if (names.has(u.name.toLowerCase())) throw new TypeError(`${where}.name "${u.name}" is used twice`)
    names.add(u.name.toLowerCase())
    if (u.passwordHash !== undefined && !isPasswordHash(u.passwordHash))
      throw new TypeError(`${where}.passwordHash must come from \`convotrack-collector hash-password\` (scrypt$…)`)
    if (u.passwordHash === undefined && !auth.trustProxyHeader)
      throw new TypeError(`${where}.passwordHash is required (unless auth.trustProxyHeader signs users in)`)
    if (!isRole(u.role)) throw new TypeError(`${where}.role must be viewer, operator or admin`)
    scopeList(u.bots, where)
  }
  for (const [i, t] of (auth.tokens ?? []).entries()) {
    const where = `auth.tokens[${i}]`
    if (typeof t?.name !== 'string' || t.name === '') throw new TypeError(`${where}.name must be a non-empty string`)
    if (typeof t.token !== 'string' || t.token.length < 16)
      throw new TypeError(`${where}.token must be a string of at least 16 characters`)
    if (!isRole(t.role)) throw new TypeError(`${where}.role must be viewer, operator or admin`)
    scopeList(t.bots, where)
  }
  if (auth.metricsToken !== undefined && (typeof auth.metricsToken !== 'string' || auth.metricsToken.length < 16))
    throw new TypeError('auth.metricsToken must be a string of at least 16 characters')
  if (auth.trustProxyHeader !== undefined && !/^[A-Za-z0-9-]+$/.test(auth.trustProxyHeader))
    throw new TypeError('auth.trustProxyHeader must be a header name, e.g. X-Forwarded-Email')
  if (auth.sessionHours !== undefined && !(auth.sessionHours > 0))
    throw new TypeError('auth.sessionHours must be a positive number')
  if (!auth.users?.length && !auth.tokens?.length)
    throw new TypeError('auth needs at least one user (auth.users) or token (auth.tokens)')
}

const digest = (s: string) => createHash('sha256').update(s).digest()

/** Constant-time string equality (both sides hashed first, so lengths don't leak). */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b))
}

function bearer(req: Request): string | undefined {
  const h = req.headers.authorization
  if (typeof h !== 'string') return undefined
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h)
  return m?.[1]
}

function cookie(req: Request, name: string): string | undefined {
  const header = req.headers.cookie
  if (typeof header !== 'string') return undefined
  for (const part of header.split(';')) {
    const i = part.indexOf('=')
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim()
  }
  return undefined
}

/** Host header without the port, lower case; IPv6 without brackets. */
export function hostName(host: string | undefined): string {
  if (!host) return ''
  const h = host.trim().toLowerCase()
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']'))
  const i = h.lastIndexOf(':')
  return i >= 0 && h.indexOf(':') === i ? h.slice(0, i) : h
}

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/** Dependencies of {@link accessControl}. */
export interface AccessDeps {
  auth: AuthOptions | undefined
  store: RecordStore
  feed: LiveFeed
  /** Host names the dashboard answers to. */
  hosts: () => ReadonlySet<string>
  publicDir: string
  log: Logger
}

/**
 * Sign-in and authorization for every route of {@link ROUTE_RULES}: the gate (Host check,
 * credentials, role, bot scope, same-origin proof, audit) and the sign-in routes
 * (`GET/POST /login`, `POST /logout`, `GET /api/me`).
 *
 * @example const access = accessControl({ auth, store, feed, hosts, publicDir, log }); app.use(access.gate, access.routes)
 */
export function accessControl(deps: AccessDeps): { gate: RequestHandler; routes: Router } {
  const { auth, log } = deps
  const users = new Map<string, AuthUser>()
  for (const u of auth?.users ?? []) users.set(u.name.toLowerCase(), u)
  const tokens: AuthToken[] = [...(auth?.tokens ?? [])]
  const sessions = new SessionSigner(auth?.sessionSecret, (auth?.sessionHours ?? 12) * 3_600_000)
  const throttle = new LoginThrottle()
  const proxyFrom = new Set(auth?.trustProxyFrom ?? ['127.0.0.1', '::1', '::ffff:127.0.0.1'])
  const credentialOf = (name: string) => {
    const u = users.get(name.toLowerCase())
    return u ? (u.passwordHash ?? '') : undefined
  }
  const asPrincipal = (who: AuthUser | AuthToken, via: Principal['via'], session?: SessionClaims): Principal => ({
    name: who.name,
    role: who.role,
    bots: scopeList(who.bots, who.name),
    via,
    ...(session ? { session } : {}),
  })
  const jsonBody = express.json({ limit: '64kb' })
  const formOrJson = [express.json({ limit: '8kb' }), express.urlencoded({ limit: '8kb', extended: false })]

  const identify = (req: Request): Principal | undefined => {
    if (auth?.trustProxyHeader && proxyFrom.has(req.socket.remoteAddress ?? '')) {
      const who = req.get(auth.trustProxyHeader)
      if (who) {
        const user = users.get(who.trim().toLowerCase())
        if (!user)
          throw new RequestError(
            403,
            'forbidden',
            'the signed-in person has no user in auth.users',
            auth.trustProxyHeader,
          )
        return asPrincipal(user, 'proxy')
      }
    }
    const token = bearer(req)
    if (token !== undefined) {
      let found: AuthToken | undefined
      for (const t of tokens) if (safeEqual(t.token, token) && !found) found = t
      if (!found) throw new RequestError(401, 'unauthorized', 'the bearer token is not valid', 'authorization')
      return asPrincipal(found, 'token')
    }
    const claims = sessions.verify(cookie(req, SESSION_COOKIE), credentialOf)
    const user = claims && users.get(claims.user.toLowerCase())
    return claims && user ? asPrincipal(user, 'session', claims) : undefined
  }

  const checkOrigin = (req: Request, principal: Principal | undefined) => {
    const site = req.get('sec-fetch-site')
    if (site !== undefined && site !== 'same-origin' && site !== 'none')
      throw new RequestError(
        403,
        'cross_origin',
        'state-changing requests must come from the dashboard itself',
        'origin',
      )
    const origin = req.get('origin')
    if (origin !== undefined) {
      let host = ''
      try {
        host = new URL(origin).host
      } catch {}
      if (host === '' || host !== (req.headers.host ?? '').toLowerCase())
        throw new RequestError(403, 'cross_origin', 'the Origin of this request is not the collector', 'origin')
    } else if (site === undefined && (principal?.via === 'session' || principal?.via === 'proxy'))
      throw new RequestError(403, 'cross_origin', 'a browser session must send Origin or Sec-Fetch-Site', 'origin')
  }

  const botOf = async (rule: RouteRule, req: Request, params: Record<string, string>) => {
    const body = (req.body ?? {}) as Record<string, unknown>
    switch (rule.bot) {
      case 'query':
        return typeof req.query.bot === 'string' && req.query.bot !== '' ? req.query.bot : undefined
      case 'body':
        return typeof body.bot === 'string' ? body.bot : undefined
      case 'page':
        return typeof body.bot === 'string' && body.bot.trim() !== ''
          ? body.bot.trim()
          : `messenger-${String(body.pageId ?? '')}`
      case 'record': {
        const id = Number(params.id)
        return Number.isSafeInteger(id) ? (await deps.store.record(id))?.bot : undefined
      }
      default:
        return undefined
    }
  }

  const auditing = (rule: RouteRule, req: Request, res: Response, principal: Principal) => {
    const audit = rule.audit
    if (!audit) return
    const json = res.json.bind(res)
    res.json = (result: unknown) => {
      if (res.statusCode >= 400) return json(result)
      let drafts: AuditDraft[]
      try {
        const made = audit(req, (result ?? {}) as Record<string, unknown>)
        drafts = Array.isArray(made) ? made : [made]
      } catch {
        return json(result)
      }
      const ts = Date.now()
      Promise.all(
        drafts.map((draft) =>
          Promise.resolve(deps.store.addAudit({ ts, actor: principal.name, ...draft })).catch((e) =>
            log.error({ err: e, action: draft.action }, 'audit log write failed'),
          ),
        ),
      ).finally(() => json(result))
      return res
    }
  }

  const gate: RequestHandler = async (req: Request, res: Response, next: NextFunction) => {
    try {
      const found = findRule(req.method, req.path)
      if (!found) {
        if (auth) throw new RequestError(404, 'not_found', `nothing at ${req.method} ${req.path}`, '')
        return next()
      }
      const { rule, params } = found
      if (rule.access === 'probe' || rule.access === 'bot-key' || rule.access === 'signature') return next()
      if (rule.access === 'metrics') {
        if (auth) {
          const token = bearer(req)
          if (!auth.metricsToken || token === undefined || !safeEqual(auth.metricsToken, token))
            throw new RequestError(
              401,
              'unauthorized',
              '/metrics needs `Authorization: Bearer <auth.metricsToken>`',
              '',
            )
        }
        return next()
      }
      if (!deps.hosts().has(hostName(req.headers.host)))
        throw new RequestError(
          421,
          'invalid_host',
          'this Host is not one the collector answers to (add it to allowedHosts)',
          'host',
        )
      // The dashboard is never framed by another site (clickjacking a Pause), nor sniffed.
      res.setHeader('x-frame-options', 'DENY')
      res.setHeader('content-security-policy', "frame-ancestors 'none'")
      res.setHeader('x-content-type-options', 'nosniff')
      res.setHeader('referrer-policy', 'same-origin')
      const principal = auth ? identify(req) : LOCAL
      if (auth) {
        res.setHeader('cache-control', 'no-store')
        res.setHeader('vary', 'Cookie, Authorization')
      }
      if (rule.access !== 'public') {
        if (!principal) {
          if (req.method === 'GET' && !req.path.startsWith('/api/') && req.accepts(['html', 'json']) === 'html')
            return res.redirect(302, '/login')
          throw new RequestError(
            401,
            'unauthorized',
            'sign in (POST /login) or send `Authorization: Bearer <token>`',
            '',
          )
        }
        if (!roleAllows(principal.role, rule.access))
          throw new RequestError(403, 'forbidden', `this needs the ${rule.access} role; you are ${principal.role}`, '')
      }
      if (STATE_CHANGING.has(req.method)) checkOrigin(req, principal)
      if (principal) res.locals.principal = principal
      if (rule.bot && principal && principal.bots !== '*') {
        if (rule.bot === 'body' || rule.bot === 'page')
          await new Promise<void>((resolve, reject) => jsonBody(req, res, (e?: unknown) => (e ? reject(e) : resolve())))
        const bot = await botOf(rule, req, params)
        if (bot !== undefined && !principal.bots.includes(bot))
          throw new RequestError(403, 'forbidden', `you have no access to bot "${bot}"`, 'bot')
      }
      if (principal) auditing(rule, req, res, principal)
      next()
    } catch (e) {
      next(e)
    }
  }

  const routes = express.Router()
  const cookieAttrs = (req: Request, maxAge: number) =>
    [
      'Path=/',
      'HttpOnly',
      'SameSite=Lax',
      `Max-Age=${maxAge}`,
      ...((req.socket as { encrypted?: boolean }).encrypted || req.get('x-forwarded-proto') === 'https'
        ? ['Secure']
        : []),
    ].join('; ')
  const wantsJson = (req: Request) => !req.is('application/x-www-form-urlencoded')

  routes.get('/login', (_req, res) => {
    if (!auth) return res.redirect(302, '/')
    const page = join(deps.publicDir, 'login.html')
    if (!existsSync(page)) throw new RequestError(404, 'not_found', 'no login page in publicDir', '')
    res.setHeader('cache-control', 'no-store')
    res.sendFile(page)
  })
  routes.post('/login', ...formOrJson, async (req, res) => {
    if (!auth) throw new RequestError(404, 'not_found', 'this collector has no sign-in (no auth configured)', '')
    const body = (req.body ?? {}) as Record<string, unknown>
    const name = typeof body.name === 'string' ? body.name.trim() : ''
    const password = typeof body.password === 'string' ? body.password : ''
    const keys = [`user:${name.toLowerCase()}`, `ip:${req.socket.remoteAddress ?? ''}`]
    const wait = throttle.waitMs(keys)
    if (wait > 0) {
      res.setHeader('retry-after', String(Math.ceil(wait / 1000)))
      throw new RequestError(429, 'too_many_attempts', 'too many failed sign-ins: wait and try again', '')
    }
    const user = users.get(name.toLowerCase())
    const ok = await verifyPassword(password, user?.passwordHash)
    if (!ok || !user) {
      throttle.failed(keys)
      log.warn({ user: name.slice(0, 64), remote: req.socket.remoteAddress }, 'sign-in failed')
      if (!wantsJson(req)) return res.redirect(303, '/login?failed=1')
      throw new RequestError(401, 'invalid_credentials', 'wrong name or password', '')
    }
    throttle.succeeded(keys)
    const { value, claims } = sessions.issue(user.name, user.passwordHash ?? '')
    res.setHeader(
      'set-cookie',
      `${SESSION_COOKIE}=${value}; ${cookieAttrs(req, Math.floor((claims.expires - Date.now()) / 1000))}`,
    )
    log.info({ user: user.name }, 'signed in')
    if (!wantsJson(req)) return res.redirect(303, '/')
    res.json({ name: user.name, role: user.role, bots: user.bots })
  })
  routes.post('/logout', (req, res) => {
    const claims = sessions.verify(cookie(req, SESSION_COOKIE), credentialOf)
    if (claims) {
      sessions.revoke(claims)
      deps.feed.endSession(claims.id)
      log.info({ user: claims.user }, 'signed out')
    }
    res.setHeader('set-cookie', `${SESSION_COOKIE}=; ${cookieAttrs(req, 0)}`)
    res.setHeader('clear-site-data', '"cache", "storage"')
    if (!wantsJson(req)) return res.redirect(303, '/login')
    res.json({ signedOut: true })
  })
  routes.get('/api/me', (_req, res) => {
    const p = principalOf(res)
    res.json({ name: p.name, role: p.role, bots: p.bots === '*' ? ['*'] : p.bots, auth: !!auth, via: p.via })
  })
  return { gate, routes }
}
