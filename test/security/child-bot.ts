/**
 * A bot process for the security suite: every adapter runs one conversation with a tracker
 * that logs the way users run it, to the console (`debug: true`, the default onError), against
 * the service at SINK_URL. The parent test searches this process's stdout and stderr for every
 * secret. SERVICE_MODE=refuse: the Graph API refuses the send too (an error path for the bot).
 */
import { createTracker } from '@convotrack/core'
import { driveAll, startPlatformApis } from './drivers'
import { SECRETS } from './support'

const apis = await startPlatformApis()
if (process.env.SERVICE_MODE === 'refuse') apis.graphMode = 'refuse'
const tracker = createTracker({
  apiKey: SECRETS.trackingKey,
  baseUrl: process.env.SINK_URL,
  debug: true,
  retry: { maxAttempts: 2, minDelayMs: 5, maxDelayMs: 20 },
})
await driveAll(tracker, apis)
const result = await tracker.close(5_000)
await apis.close()
console.log(`CHILD DONE sent=${result.sent} failed=${result.failed}`)
