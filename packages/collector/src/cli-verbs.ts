import { parseArgs } from 'node:util'
import { hashPassword } from './access/password'
import { LiveFeed } from './live/live-feed'
import { eraseUser } from './ops/lifecycle'
import { openStore } from './store/open-store'

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) {
    chunks.push(chunk as Buffer)
    if (chunks.reduce((n, c) => n + c.length, 0) > 4096) throw new Error('the password is longer than 4 KiB')
  }
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '')
}

/**
 * `hash-password`: reads the password on stdin (so it is not in `ps` or the shell history)
 * and prints the `passwordHash` for `auth.users[]`.
 */
export async function hashPasswordVerb(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('password (then Enter, Ctrl-D): ')
  return hashPassword(await readStdin())
}

/**
 * `erase-user --db FILE|postgres://… --bot NAME --user ID`: erases one end user of one bot from a
 * SQLite database (stop the collector first, or use `DELETE /api/users/:userId?bot=` while it
 * runs) or from PostgreSQL (running collectors' dashboards are told).
 */
export async function eraseUserVerb(argv: string[]): Promise<{ removed: number; messages: number }> {
  const { values } = parseArgs({
    args: argv,
    options: { db: { type: 'string' }, bot: { type: 'string' }, user: { type: 'string' } },
    strict: true,
  })
  for (const key of ['db', 'bot', 'user'] as const)
    if (!values[key]) throw new Error(`erase-user: --${key} is required`)
  const db = values.db as string
  const store = await openStore(db, { listen: false })
  const feed = new LiveFeed()
  try {
    const result = await eraseUser(store, feed, values.bot as string, values.user as string)
    await store.addAudit({
      ts: Date.now(),
      actor: `cli:${process.env.USER ?? 'unknown'}`,
      action: 'erase',
      bot: values.bot as string,
      target: values.user as string,
      detail: { removed: result.removed },
    })
    return result
  } finally {
    feed.close()
    await store.close()
  }
}
