/**
 * The last `capacity` keys seen, oldest forgotten first. Slack sends one message twice when
 * an app subscribes to both `message.*` and `app_mention`, and again when it retries a slow
 * ack; a message is tracked once per process.
 */
export class RecentKeys {
  private readonly keys = new Set<string>()

  constructor(private readonly capacity: number) {}

  /** True when `key` was seen before; remembers it either way. */
  seen(key: string): boolean {
    if (this.keys.has(key)) return true
    this.keys.add(key)
    if (this.keys.size > this.capacity) {
      const oldest = this.keys.values().next().value
      if (oldest !== undefined) this.keys.delete(oldest)
    }
    return false
  }
}
