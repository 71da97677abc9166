import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

/** The session cookie's name. */
export const SESSION_COOKIE = 'convotrack_session'

/** What a valid session cookie says. */
export interface SessionClaims {
  /** User name. */
  user: string
  /** Expiry, epoch ms. */
  expires: number
  /** Random id: sign-out revokes it, live streams are tagged with it. */
  id: string
}

/**
 * Stateless signed session cookies: `base64url(JSON).base64url(HMAC-SHA256)`. A cookie is
 * refused when its signature is not this collector's (tampered or foreign), when it expired,
 * when it was signed out, or when the user's password changed since (a fingerprint of the
 * hash is signed in).
 *
 * @example const cookie = sessions.issue('ada', user.passwordHash); sessions.verify(cookie, (name) => hashOf(name))
 */
export class SessionSigner {
  private readonly key: Buffer
  private readonly revoked = new Map<string, number>()

  constructor(
    secret: string | undefined,
    private readonly lifetimeMs: number,
  ) {
    this.key = secret ? createHash('sha256').update(secret).digest() : randomBytes(32)
  }

  /** A new cookie value for `user`; `credential` is the password hash (or '' for proxy users). */
  issue(user: string, credential: string, now = Date.now()): { value: string; claims: SessionClaims } {
    const claims: SessionClaims = { user, expires: now + this.lifetimeMs, id: randomBytes(16).toString('base64url') }
    const payload = Buffer.from(
      JSON.stringify({ u: claims.user, e: claims.expires, n: claims.id, f: fingerprint(credential) }),
    ).toString('base64url')
    return { value: `${payload}.${this.sign(payload)}`, claims }
  }

  /** The claims of a valid cookie, or undefined. `credentialOf` gives a user's current password hash (undefined: no such user). */
  verify(
    value: string | undefined,
    credentialOf: (user: string) => string | undefined,
    now = Date.now(),
  ): SessionClaims | undefined {
    if (!value || value.length > 1024) return undefined
    const dot = value.indexOf('.')
    if (dot <= 0) return undefined
    const payload = value.slice(0, dot)
    const given = Buffer.from(value.slice(dot + 1), 'base64url')
    const expected = Buffer.from(this.sign(payload), 'base64url')
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined
    let parsed: { u?: unknown; e?: unknown; n?: unknown; f?: unknown }
    try {
      parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
    } catch {
      return undefined
    }
    if (typeof parsed.u !== 'string' || typeof parsed.e !== 'number' || typeof parsed.n !== 'string') return undefined
    if (parsed.e <= now || this.revoked.has(parsed.n)) return undefined
    const credential = credentialOf(parsed.u)
    if (credential === undefined || parsed.f !== fingerprint(credential)) return undefined
    return { user: parsed.u, expires: parsed.e, id: parsed.n }
  }

  /** Signs a session out until it would have expired anyway. */
  revoke(claims: SessionClaims, now = Date.now()): void {
    for (const [id, expires] of this.revoked) if (expires <= now) this.revoked.delete(id)
    this.revoked.set(claims.id, claims.expires)
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url')
  }
}

function fingerprint(credential: string): string {
  return createHash('sha256').update(`convotrack-session:${credential}`).digest('base64url').slice(0, 16)
}
