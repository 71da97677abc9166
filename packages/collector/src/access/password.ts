import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto'

const N = 16384
const R = 8
const P = 1
const KEYLEN = 32

function derive(password: string, salt: Buffer, n: number, r: number, p: number, keylen: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, keylen, { N: n, r, p, maxmem: 256 * n * r + 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  )
}

/**
 * Hashes a password for `auth.users[].passwordHash`: scrypt (node:crypto), random salt,
 * `scrypt$N$r$p$<salt b64>$<hash b64>`. The CLI verb `hash-password` prints one.
 *
 * @example const passwordHash = await hashPassword('correct horse battery staple')
 */
export async function hashPassword(password: string): Promise<string> {
  if (typeof password !== 'string' || password.length < 8)
    throw new TypeError('password must be a string of at least 8 characters')
  const salt = randomBytes(16)
  const key = await derive(password, salt, N, R, P, KEYLEN)
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64')}$${key.toString('base64')}`
}

/** True when `hash` has the shape {@link hashPassword} makes. */
export function isPasswordHash(hash: unknown): hash is string {
  return typeof hash === 'string' && /^scrypt\$\d+\$\d+\$\d+\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/.test(hash)
}

// Checked when the name is unknown, so a wrong name costs as long as a wrong password.
const DUMMY = `scrypt$${N}$${R}$${P}$${Buffer.alloc(16).toString('base64')}$${Buffer.alloc(KEYLEN).toString('base64')}`

/**
 * Checks a password against a hash from {@link hashPassword}, in constant time. With no hash
 * (unknown user) the same work is done and the answer is false.
 *
 * @example if (await verifyPassword(given, user.passwordHash)) signIn(user)
 */
export async function verifyPassword(password: string, hash: string | undefined): Promise<boolean> {
  const known = isPasswordHash(hash)
  const parts = (known ? hash : DUMMY).split('$')
  const [n, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])]
  const salt = Buffer.from(parts[4] ?? '', 'base64')
  const expected = Buffer.from(parts[5] ?? '', 'base64')
  if (n > 1 << 20 || r > 32 || p > 16 || expected.length < 16) return false
  const key = await derive(typeof password === 'string' ? password : '', salt, n, r, p, expected.length)
  return timingSafeEqual(key, expected) && known
}
