/**
 * A real PostgreSQL server for the tests: Debian's `postgresql` binaries, a fresh cluster in a
 * temp folder, a free TCP port on 127.0.0.1 and the unix socket in the same folder. A missing
 * server FAILS (no skip): CI installs it with scripts/ensure-system-deps.sh.
 */
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import { freeStablePort } from '../../../../test/support/stable-port'

const run = promisify(execFile)

export interface PostgresServer {
  port: number
  /** `postgres://postgres@127.0.0.1:PORT/postgres` */
  url: string
  /** URL of another database on this server. */
  urlFor(database: string): string
  /** Creates an empty database and returns its URL. */
  createDatabase(name?: string): Promise<string>
  /** The URL of database `name`, created when it does not exist yet (a kept cluster reused). */
  ensureDatabase(name: string): Promise<string>
  /** Fast shutdown (open sessions are ended, like a restart under load). */
  stop(): Promise<void>
  /** Starts again on the same port and data. */
  start(): Promise<void>
  /**
   * Freezes the server (SIGSTOP to its postmaster, then to every backend and helper process it
   * forked): the sockets stay open and the kernel still accepts connections, but nothing answers —
   * a database that hangs instead of going away. Only this server's processes are touched.
   */
  freeze(): void
  /** Resumes a frozen server (SIGCONT to every process {@link freeze} stopped). Safe to call when not frozen. */
  thaw(): void
  /** Stops the server and removes its folder. */
  destroy(): Promise<void>
}

/**
 * False on the other Node lines (scripts/test-node-lines.sh sets `CONVOTRACK_NODE_LINE`): the
 * PostgreSQL halves of the migration suites prove what the database answers, which no Node version
 * changes, so they run on the system Node only (scripts/node-matrix.json says which suites, and why;
 * the suites that exercise the client itself run on every line).
 */
export const POSTGRES_LOGIC_HERE = process.env.CONVOTRACK_NODE_LINE === undefined

/** The binaries folder of the newest installed PostgreSQL (Debian layout), or a loud error. */
export function postgresBinDir(): string {
  const root = '/usr/lib/postgresql'
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl')))
        .sort((a, b) => Number(b) - Number(a))
    : []
  if (versions.length === 0)
    throw new Error(
      'PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/pg_ctl): run `bash scripts/ensure-system-deps.sh` ' +
        '(Debian: apt-get install -y postgresql). The PostgreSQL tests need a real server and do not skip.',
    )
  return join(root, versions[0] as string, 'bin')
}

let counter = 0

/**
 * A new cluster (a copy of one initdb made once: {@link clusterTemplate}) + start. Runs the server as
 * the `postgres` user when the tests run as root (initdb refuses root).
 * With `dir` (the scale benchmark), the cluster lives there and is kept: a second start reuses its data.
 */
export async function startPostgres(options: { dir?: string } = {}): Promise<PostgresServer> {
  const bin = postgresBinDir()
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'convotrack-pg-'))
  const data = join(dir, 'data')
  const asRoot = userInfo().uid === 0
  // PostgreSQL's programs by name; others (cp) by their path.
  const program = (cmd: string) => (cmd.startsWith('/') ? cmd : join(bin, cmd))
  const as = async (cmd: string, args: string[]) => {
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', program(cmd), ...args]] : [program(cmd), args]
    return run(file, argv, { timeout: 60_000 })
  }
  if (asRoot) chownSync(dir, ...postgresIds())
  if (!existsSync(join(data, 'PG_VERSION'))) await as('/bin/cp', ['-a', await clusterTemplate(bin, as), data])
  const port = await freeStablePort()
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=200`
  let running = false
  let frozen: number[] = []
  const server: PostgresServer = {
    port,
    url,
    urlFor: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    async createDatabase(name = `t_${process.pid}_${++counter}`) {
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      try {
        await client.query(`CREATE DATABASE ${name}`)
      } finally {
        await client.end()
      }
      return server.urlFor(name)
    },
    async ensureDatabase(name) {
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      try {
        const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])
        if (found.rowCount === 0) await client.query(`CREATE DATABASE ${name}`)
      } finally {
        await client.end()
      }
      return server.urlFor(name)
    },
    async start() {
      await as('pg_ctl', ['-D', data, '-o', opts, '-l', join(dir, 'server.log'), '-w', '-t', '30', 'start'])
      running = true
    },
    async stop() {
      if (!running) return
      await as('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '30', 'stop'])
      running = false
    },
    freeze() {
      // postmaster.pid's first line is the postmaster's pid; it is stopped first, so no new child appears meanwhile.
      const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0])
      if (!Number.isInteger(postmaster) || postmaster <= 1) throw new Error('no postmaster pid')
      process.kill(postmaster, 'SIGSTOP')
      frozen = [postmaster]
      for (const child of childrenOf(postmaster)) {
        try {
          process.kill(child, 'SIGSTOP')
          frozen.push(child)
        } catch {
          // exited meanwhile
        }
      }
    },
    thaw() {
      // Children first, then the postmaster (it would otherwise see them as stopped).
      for (const pid of frozen.slice(1).concat(frozen.slice(0, 1))) {
        try {
          process.kill(pid, 'SIGCONT')
        } catch {
          // exited meanwhile
        }
      }
      frozen = []
    },
    async destroy() {
      server.thaw()
      try {
        await server.stop()
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },
  }
  try {
    await server.start()
  } catch (e) {
    if (!options.dir) rmSync(dir, { recursive: true, force: true })
    throw e
  }
  return server
}

const INITDB = ['-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync', '--locale=C.UTF-8']

/**
 * A fresh cluster, made once per machine, PostgreSQL build and user (initdb was ~1 CPU-second for
 * each of the ~30 servers a verify starts): every server copies it (`cp -a`, ~0.1 s). Made in a
 * folder of its own and renamed into place, so test processes starting at once never see half of one.
 */
async function clusterTemplate(bin: string, as: (cmd: string, args: string[]) => Promise<unknown>): Promise<string> {
  const key = createHash('sha256')
    .update(`${bin}\0${INITDB.join(' ')}`)
    .digest('hex')
    .slice(0, 12)
  const template = join(tmpdir(), `convotrack-pg-template-${userInfo().uid}-${key}`)
  if (existsSync(join(template, 'PG_VERSION'))) return template
  const making = mkdtempSync(join(tmpdir(), 'convotrack-pg-template-'))
  try {
    if (userInfo().uid === 0) chownSync(making, ...postgresIds())
    await as('initdb', ['-D', join(making, 'data'), ...INITDB])
    try {
      renameSync(join(making, 'data'), template)
    } catch (e) {
      // Another process put one there first: theirs is used.
      if (!existsSync(join(template, 'PG_VERSION'))) throw e
    }
  } finally {
    rmSync(making, { recursive: true, force: true })
  }
  return template
}

/** Pids whose parent is `pid` (from /proc; `comm` may hold spaces and parentheses: parse after the last ')'). */
function childrenOf(pid: number): number[] {
  const out: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid === pid) out.push(Number(entry))
    } catch {
      // gone
    }
  }
  return out
}

function postgresIds(): [number, number] {
  // `id -u postgres` without a shell: /etc/passwd.
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'))
  if (!line) throw new Error("no `postgres` system user: install Debian's postgresql package")
  const [, , uid, gid] = line.split(':')
  return [Number(uid), Number(gid)]
}
