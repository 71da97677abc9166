/**
 * Runs the botbuilder example against a tracking service (the local collector by default):
 *   CONVOTRACK_URL=http://127.0.0.1:8787 CONVOTRACK_API_KEY=demo-key pnpm --filter @convotrack/example-botbuilder start
 */
import { runExample } from '../../run-example'
import { startExampleBot } from './bot'

await runExample('botbuilder', startExampleBot)
