import { promisify } from 'node:util'
import { gunzip } from 'node:zlib'
import { ConvotrackError, type Tracker } from '@convotrack/core'
import { flushForLambda, reportError, trackSerialized } from '@convotrack/core/adapter'
import { parseLogLine } from './log-line'
import type { CloudWatchLogsData, CloudWatchLogsEvent, LambdaContextLike } from './types'

const gunzipAsync = promisify(gunzip)

/** Options of {@link createLogForwarder}. */
export interface LogForwarderOptions {
  /** Most ms to wait for delivery before the forwarder returns. Default 10 000, capped to the Lambda's remaining time (core's `flushForLambda`, the same option name in every adapter). */
  flushTimeoutMs?: number
}

/** What one forwarder invocation did. */
export interface ForwardResult {
  /** Log events in the payload. */
  logEvents: number
  /** Record lines handed to the transport. */
  forwarded: number
  /** Marked lines that did not parse (each reported through `onError`). */
  invalid: number
  /** True when everything forwarded was delivered before the deadline. */
  delivered: boolean
}

/**
 * A Lambda handler for a CloudWatch Logs subscription on the skill's log group: decodes the
 * base64 gzip `awslogs.data`, picks out the lines written by `voice.logIntegration(...)` and
 * delivers them with the tracker's transport (retries, backoff), flushing before it returns.
 *
 * @example
 * export const handler = createLogForwarder(createTracker({ apiKey: process.env.CONVOTRACK_API_KEY }))
 */
export function createLogForwarder(
  tracker: Tracker,
  options: LogForwarderOptions = {},
): (event: CloudWatchLogsEvent, context?: LambdaContextLike) => Promise<ForwardResult> {
  const flushTimeoutMs = options.flushTimeoutMs ?? 10_000
  return async (event, context) => {
    const data = await decodePayload(event)
    const result: ForwardResult = { logEvents: 0, forwarded: 0, invalid: 0, delivered: true }
    // CONTROL_MESSAGE: CloudWatch checking that the destination is reachable.
    if (data.messageType !== 'DATA_MESSAGE' || !Array.isArray(data.logEvents)) return result
    result.logEvents = data.logEvents.length
    for (const logEvent of data.logEvents) {
      if (typeof logEvent?.message !== 'string') continue
      const record = parseLogLine(logEvent.message)
      if (record === undefined) continue
      if (record instanceof Error) {
        result.invalid++
        reportError(
          tracker,
          new ConvotrackError('invalid_log_line', `${data.logGroup} ${logEvent.id}: ${record.message}`),
        )
        continue
      }
      const { logGroup: _, ...serialized } = record
      if (trackSerialized(tracker, serialized)) result.forwarded++
    }
    if (result.forwarded > 0) {
      result.delivered = (await flushForLambda(tracker, context, { flush: true, flushTimeoutMs }))?.delivered === true
    }
    return result
  }
}

async function decodePayload(event: CloudWatchLogsEvent): Promise<CloudWatchLogsData> {
  const data = event?.awslogs?.data
  if (typeof data !== 'string')
    throw new ConvotrackError(
      'invalid_log_payload',
      'not a CloudWatch Logs subscription event: expected { awslogs: { data: <base64 gzip> } }',
    )
  try {
    const json = (await gunzipAsync(Buffer.from(data, 'base64'))).toString('utf8')
    const parsed = JSON.parse(json) as CloudWatchLogsData
    if (!parsed || typeof parsed !== 'object') throw new Error('payload is not a JSON object')
    return parsed
  } catch (error) {
    throw new ConvotrackError(
      'invalid_log_payload',
      `awslogs.data is not base64 gzip JSON: ${(error as Error).message}`,
      { cause: error },
    )
  }
}
