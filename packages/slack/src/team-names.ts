/** The part of a Web API client used to name a team. */
export interface TeamInfoClient {
  team?: { info?: (options?: { team?: string }) => Promise<unknown> }
}

export interface TeamNamesOptions {
  /** Ask Slack at all; false uses the id as the name. */
  lookup: boolean
  /** Longest wait for `team.info` before falling back to the id. */
  timeoutMs: number
  /** After a failed lookup, how long the id stands in before asking again. */
  retryAfterMs: number
  /** Each wait for a lookup, settled once its records are handed over (the Lambda flush waits for them). */
  onWaiting: (work: Promise<unknown>) => void
  /** A failed lookup (missing `team:read` scope, network), reported once per attempt. */
  onError: (error: unknown) => void
  now?: () => number
}

/**
 * Team names from `team.info`, asked once per team and cached. Asked only after the bot's own
 * handler ran, never on the way to it; while a lookup is in flight, the records that need the
 * name wait for it (in order), bounded by `timeoutMs`, and a failure falls back to the id.
 */
export class TeamNames {
  private readonly known = new Map<string, { name: string; until: number }>()
  private readonly inFlight = new Map<string, Promise<void>>()

  constructor(private readonly options: TeamNamesOptions) {}

  /** Calls `use(name)` now when the name is known, else once the lookup settles. */
  withName(teamId: string, client: TeamInfoClient | undefined, use: (name: string) => void): void {
    const now = (this.options.now ?? Date.now)()
    const hit = this.known.get(teamId)
    if (hit && hit.until > now) {
      use(hit.name)
      return
    }
    const team = client?.team
    if (!this.options.lookup || typeof team?.info !== 'function') {
      use(hit?.name ?? teamId)
      return
    }
    let work = this.inFlight.get(teamId)
    if (!work) {
      work = this.lookup(teamId, team as Required<NonNullable<TeamInfoClient['team']>>, hit?.name)
      this.inFlight.set(teamId, work)
    }
    const handedOver = work.then(() => {
      try {
        use(this.known.get(teamId)?.name ?? teamId)
      } catch (error) {
        this.options.onError(error)
      }
    })
    this.options.onWaiting(handedOver)
  }

  private async lookup(
    teamId: string,
    team: Required<NonNullable<TeamInfoClient['team']>>,
    previous: string | undefined,
  ): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    try {
      const call = team.info({ team: teamId })
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`team.info did not answer within ${this.options.timeoutMs} ms`)),
          this.options.timeoutMs,
        )
        timer.unref()
      })
      call.catch(() => undefined) // a late failure after the timeout is not unhandled
      const result = (await Promise.race([call, timeout])) as { team?: { name?: unknown } } | undefined
      const name = result?.team?.name
      if (typeof name !== 'string' || name === '') throw new Error('team.info returned no team name')
      this.known.set(teamId, { name, until: Number.POSITIVE_INFINITY })
    } catch (error) {
      const now = (this.options.now ?? Date.now)()
      this.known.set(teamId, { name: previous ?? teamId, until: now + this.options.retryAfterMs })
      this.options.onError(error)
    } finally {
      clearTimeout(timer)
      this.inFlight.delete(teamId)
    }
  }
}
