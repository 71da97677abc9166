import { randomBytes } from 'node:crypto'

/**
 * Idempotency keys: `<random process prefix>.<counter in base36>`, unique per record and stable
 * across its retries, so a service that stored a request whose answer was lost stores it once.
 * Format: ≤ 128 chars of `[A-Za-z0-9._:-]`.
 */
export class IdempotencyKeys {
  private readonly prefix = randomBytes(8).toString('hex')
  private counter = 0

  next(): string {
    return `${this.prefix}.${(this.counter++).toString(36)}`
  }
}
