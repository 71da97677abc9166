#!/usr/bin/env node
import { eraseUserVerb, hashPasswordVerb } from './cli-verbs'
import { startCollector } from './collector'
import { parseCommandLine, USAGE } from './config'
import { isPostgresUrl, redactUrl } from './store/postgres/pg-store'

async function main(): Promise<void> {
  const verb = process.argv[2]
  if (verb === 'hash-password') {
    console.log(await hashPasswordVerb())
    return
  }
  if (verb === 'erase-user') {
    console.log(JSON.stringify(await eraseUserVerb(process.argv.slice(3))))
    return
  }
  let command: ReturnType<typeof parseCommandLine>
  try {
    command = parseCommandLine(process.argv.slice(2))
  } catch (e) {
    console.error(`convotrack-collector: ${(e as Error).message}\n\n${USAGE}`)
    process.exit(2)
  }
  if (command.help) {
    console.log(USAGE)
    return
  }
  const collector = await startCollector({ log: 'info', ...command.options })
  console.log(`convotrack collector listening on ${collector.url}`)
  console.log(`  dashboard  ${collector.url}/`)
  console.log(`  tracking   ${collector.url}/track`)
  console.log(`  messenger  ${collector.url}/messenger/webhook`)
  const db = command.options.db
  console.log(`  database   ${isPostgresUrl(db) ? `PostgreSQL ${redactUrl(db)}` : db}`)
  console.log(
    `  bots       ${
      collector
        .bots()
        .map((b) => b.name + (b.canPause ? ' (pause webhook)' : ''))
        .join(', ') || '(none)'
    }`,
  )
  const auth = command.options.auth
  console.log(
    `  sign-in    ${
      auth
        ? `${auth.users?.length ?? 0} user(s), ${auth.tokens?.length ?? 0} token(s)${auth.trustProxyHeader ? `, proxy header ${auth.trustProxyHeader}` : ''}`
        : 'none (open to whoever reaches the address)'
    }`,
  )
  let stopping = false
  const stop = (signal: string) => {
    if (stopping) process.exit(1)
    stopping = true
    console.log(`\n${signal}: closing…`)
    collector.close().then(
      () => process.exit(0),
      () => process.exit(1),
    )
  }
  process.on('SIGINT', () => stop('SIGINT'))
  process.on('SIGTERM', () => stop('SIGTERM'))
}

main().catch((e: Error & { code?: string }) => {
  const hint = e.code === 'EADDRINUSE' ? ' (is another collector running? try --port 0)' : ''
  console.error(`convotrack-collector: ${e.message}${hint}`)
  process.exit(1)
})
