interface Slot {
  fails: number
  until: number
  last: number
}

/**
 * Slows failed sign-ins per account and per address: after `free` failures in a row, each
 * further attempt must wait, doubling from 1 s up to 15 min. A success clears the account.
 *
 * @example const wait = throttle.waitMs([`user:${name}`, `ip:${ip}`]); if (wait) return tooMany(wait)
 */
export class LoginThrottle {
  private readonly slots = new Map<string, Slot>()

  constructor(private readonly freeFor: (key: string) => number = (key) => (key.startsWith('ip:') ? 20 : 5)) {}

  /** How long the caller must still wait before trying any of `keys`, ms (0 = may try now). */
  waitMs(keys: string[], now = Date.now()): number {
    let wait = 0
    for (const key of keys) {
      const slot = this.slots.get(key)
      if (slot && slot.until > now) wait = Math.max(wait, slot.until - now)
    }
    return wait
  }

  failed(keys: string[], now = Date.now()): void {
    if (this.slots.size > 10_000) this.prune(now)
    for (const key of keys) {
      const slot = this.slots.get(key) ?? { fails: 0, until: 0, last: now }
      slot.fails += 1
      slot.last = now
      const over = slot.fails - this.freeFor(key)
      if (over >= 0) slot.until = now + Math.min(1000 * 2 ** Math.min(over, 20), 15 * 60_000)
      this.slots.set(key, slot)
    }
  }

  succeeded(keys: string[]): void {
    for (const key of keys) this.slots.delete(key)
  }

  private prune(now: number): void {
    for (const [key, slot] of this.slots) if (slot.until <= now && now - slot.last > 15 * 60_000) this.slots.delete(key)
    // Still full (an attack from many addresses): forget the oldest.
    for (const key of this.slots.keys()) {
      if (this.slots.size <= 10_000) break
      this.slots.delete(key)
    }
  }
}
