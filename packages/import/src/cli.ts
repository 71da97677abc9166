#!/usr/bin/env node
/** The `convotrack` bin: `convotrack import <file> [options]` (see `command.ts`). */
import { EXIT, main } from './command'

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    process.stderr.write(`convotrack: ${(error as Error)?.stack ?? String(error)}\n`)
    process.exitCode = EXIT.failed
  },
)
