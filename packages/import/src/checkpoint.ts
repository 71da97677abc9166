/**
 * The resume file: which source positions the service has acknowledged. Written atomically
 * (temporary file, rename; fsync once a second), so a crash at any moment leaves the previous
 * or the new state on disk, never a torn one.
 */
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs'
import { ConfigError } from '@convotrack/core'

/** What the checkpoint file holds. */
export interface CheckpointFile {
  version: 1
  /** What was being imported (a resolved file path for the CLI); a resume of something else is refused. */
  source?: string
  /** Acknowledged positions as inclusive ranges `[first, last]`, sorted and disjoint. */
  done: Array<[number, number]>
  updatedAt: string
}

/**
 * Acknowledged positions of one import, persisted as ranges (a mostly contiguous set stays tiny).
 *
 * @example const cp = Checkpoint.load('import.checkpoint.json', 'tickets.jsonl'); if (!cp.has(12)) send(12)
 */
export class Checkpoint {
  private readonly ranges: Array<[number, number]>
  private changed = false

  private constructor(
    readonly path: string,
    readonly source: string | undefined,
    ranges: Array<[number, number]>,
  ) {
    this.ranges = ranges
  }

  /** Reads the checkpoint at `path` (none yet: an empty one). Refuses a checkpoint written for another source. */
  static load(path: string, source?: string): Checkpoint {
    let text: string
    try {
      text = readFileSync(path, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Checkpoint(path, source, [])
      throw new ConfigError(`cannot read checkpoint ${path}: ${(error as Error).message}`)
    }
    let file: CheckpointFile
    try {
      file = JSON.parse(text) as CheckpointFile
      if (file.version !== 1 || !Array.isArray(file.done)) throw new Error('not a convotrack import checkpoint')
    } catch (error) {
      throw new ConfigError(
        `checkpoint ${path} is not readable (${(error as Error).message}); move it away to start over`,
      )
    }
    if (source !== undefined && file.source !== undefined && file.source !== source)
      throw new ConfigError(
        `checkpoint ${path} belongs to ${file.source}, not ${source}: pass another --checkpoint file`,
      )
    const ranges = file.done.filter(
      (r): r is [number, number] =>
        Array.isArray(r) && Number.isInteger(r[0]) && Number.isInteger(r[1]) && r[0] <= r[1],
    )
    ranges.sort((a, b) => a[0] - b[0])
    return new Checkpoint(path, source ?? file.source, ranges)
  }

  /** True when `position` was acknowledged (in this run or an earlier one). */
  has(position: number): boolean {
    const i = this.indexAtOrBefore(position)
    const r = i >= 0 ? this.ranges[i] : undefined
    return r !== undefined && position <= r[1]
  }

  /** Marks `position` acknowledged. */
  add(position: number): void {
    const i = this.indexAtOrBefore(position)
    const prev = i >= 0 ? this.ranges[i] : undefined
    if (prev && position <= prev[1]) return
    const next = this.ranges[i + 1]
    const joinsPrev = prev !== undefined && prev[1] === position - 1
    const joinsNext = next !== undefined && next[0] === position + 1
    if (joinsPrev && joinsNext && prev && next) {
      prev[1] = next[1]
      this.ranges.splice(i + 1, 1)
    } else if (joinsPrev && prev) prev[1] = position
    else if (joinsNext && next) next[0] = position
    else this.ranges.splice(i + 1, 0, [position, position])
    this.changed = true
  }

  /** Number of acknowledged positions. */
  get size(): number {
    let n = 0
    for (const [a, b] of this.ranges) n += b - a + 1
    return n
  }

  /** Acknowledged ranges (a copy). */
  get done(): Array<[number, number]> {
    return this.ranges.map(([a, b]) => [a, b])
  }

  /** True when there is something not yet on disk. */
  get dirty(): boolean {
    return this.changed
  }

  /**
   * Writes the file atomically: a temporary sibling renamed over the old one. A killed process
   * leaves the old or the new file, whole. `durable` (default) also flushes it to the disk
   * first, so it survives a power cut too; the importer does that once a second.
   */
  save(durable = true): void {
    const file: CheckpointFile = {
      version: 1,
      source: this.source,
      done: this.done,
      updatedAt: new Date().toISOString(),
    }
    const tmp = `${this.path}.${process.pid}.tmp`
    const fd = openSync(tmp, 'w')
    try {
      writeSync(fd, `${JSON.stringify(file)}\n`)
      if (durable) fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    try {
      renameSync(tmp, this.path)
    } catch (error) {
      try {
        unlinkSync(tmp)
      } catch {
        // nothing to clean
      }
      throw error
    }
    this.changed = false
  }

  /** Index of the last range starting at or before `position`, or -1. */
  private indexAtOrBefore(position: number): number {
    let lo = 0
    let hi = this.ranges.length - 1
    let found = -1
    while (lo <= hi) {
      const mid = (lo + hi) >> 1
      if ((this.ranges[mid]?.[0] ?? 0) <= position) {
        found = mid
        lo = mid + 1
      } else hi = mid - 1
    }
    return found
  }
}
