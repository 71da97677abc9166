/**
 * A first-in first-out queue with O(1) push, shift and unshift (amortized): an array and a head
 * index, compacted when the dead prefix outgrows the live part. `Array#shift` is O(n) and made
 * a long lane or a long ready list quadratic.
 */
export class Fifo<T> {
  private items: (T | undefined)[] = []
  private head = 0

  get length(): number {
    return this.items.length - this.head
  }

  push(item: T): void {
    this.items.push(item)
  }

  /** Puts an item back at the front (a record returning from a failed attempt). */
  unshift(item: T): void {
    if (this.head > 0) this.items[--this.head] = item
    else this.items.unshift(item)
  }

  peek(): T | undefined {
    return this.head < this.items.length ? this.items[this.head] : undefined
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined
    const item = this.items[this.head]
    this.items[this.head++] = undefined
    if (this.head === this.items.length) {
      this.items.length = 0
      this.head = 0
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head)
      this.head = 0
    }
    return item
  }

  /** Everything left, in order; the queue is emptied. */
  takeAll(): T[] {
    const out = this.items.slice(this.head) as T[]
    this.items = []
    this.head = 0
    return out
  }
}
