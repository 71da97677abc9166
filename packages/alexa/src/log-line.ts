import { ConfigError, isObject, isPlatform, isRecordType, isSpecVersion, type SerializedRecord } from '@convotrack/core'

/**
 * Marks a record line in the skill's log. Use it as the subscription filter pattern
 * (`"CONVOTRACK_RECORD"`) so only these lines reach the forwarder.
 */
export const LOG_LINE_MARKER = 'CONVOTRACK_RECORD'

/** Options of {@link AlexaTracking.logIntegration}. */
export interface LogIntegrationOptions {
  /** The CloudWatch Logs group the skill's Lambda writes to, e.g. `/aws/lambda/my-skill`. Required. */
  logGroupName: string
  /** Where each line goes. Default: `process.stdout.write(line + '\n')`, which Lambda ships to the log group. */
  write?: (line: string) => void
}

/** One record as written to the log: the serialized record plus the group it was meant for. */
export interface LogLineRecord extends SerializedRecord {
  logGroup: string
}

// CloudWatch Logs group names: 1–512 of [.-_/#A-Za-z0-9].
const LOG_GROUP_NAME = /^[.\-_/#A-Za-z0-9]{1,512}$/

export function checkLogGroupName(options: unknown): string {
  const name = (options as { logGroupName?: unknown } | null | undefined)?.logGroupName
  if (typeof name !== 'string' || name.length === 0)
    throw new ConfigError(
      "logIntegration({ logGroupName }) needs logGroupName: the CloudWatch Logs group your skill's Lambda writes to, e.g. { logGroupName: '/aws/lambda/my-skill' }",
    )
  if (!LOG_GROUP_NAME.test(name))
    throw new ConfigError(
      `logGroupName ${JSON.stringify(name)} is not a CloudWatch Logs group name (1–512 characters of letters, digits and . - _ / #)`,
    )
  return name
}

/**
 * One log line per record: the marker, then JSON. The body stays the exact string that
 * would have been posted, so the forwarder delivers the same bytes.
 */
export function formatLogLine(record: SerializedRecord, logGroup: string): string {
  const line: LogLineRecord = {
    logGroup,
    platform: record.platform,
    type: record.type,
    v: record.v,
    userId: record.userId,
    body: record.body,
  }
  return `${LOG_LINE_MARKER} ${JSON.stringify(line)}`
}

/**
 * Finds the record in one log event message: plain text (`…\tINFO\tCONVOTRACK_RECORD {…}` or
 * the bare line) or Lambda's JSON log format (`{"message":"CONVOTRACK_RECORD {…}",…}`).
 * Returns undefined for other lines, and an Error for a marked line that does not parse.
 */
export function parseLogLine(message: string): LogLineRecord | Error | undefined {
  let text = message
  if (text.trimStart().startsWith('{')) {
    try {
      const outer = JSON.parse(text) as { message?: unknown }
      if (typeof outer?.message === 'string') text = outer.message
    } catch {
      // not JSON-formatted logging: look for the marker in the raw text
    }
  }
  const at = text.indexOf(LOG_LINE_MARKER)
  if (at < 0) return undefined
  let parsed: Partial<LogLineRecord>
  try {
    parsed = JSON.parse(text.slice(at + LOG_LINE_MARKER.length)) as Partial<LogLineRecord>
  } catch (error) {
    return new Error(`a ${LOG_LINE_MARKER} line is not valid JSON (${(error as Error).message})`)
  }
  if (!parsed || typeof parsed !== 'object') return new Error(`a ${LOG_LINE_MARKER} line is not a JSON object`)
  const { platform, type, v, userId, body, logGroup } = parsed
  if (!isPlatform(platform))
    return new Error(`a ${LOG_LINE_MARKER} line has an unknown platform ${JSON.stringify(platform)}`)
  if (!isRecordType(type)) return new Error(`a ${LOG_LINE_MARKER} line has an unknown type ${JSON.stringify(type)}`)
  if (typeof v !== 'string' || !isSpecVersion(v))
    return new Error(`a ${LOG_LINE_MARKER} line has an unknown v ${JSON.stringify(v)}`)
  if (userId !== undefined && typeof userId !== 'string')
    return new Error(`a ${LOG_LINE_MARKER} line has a non-string userId`)
  if (typeof body !== 'string') return new Error(`a ${LOG_LINE_MARKER} line has no body string`)
  try {
    const b: unknown = JSON.parse(body)
    if (!isObject(b)) return new Error(`a ${LOG_LINE_MARKER} line's body is not a JSON object`)
  } catch {
    return new Error(`a ${LOG_LINE_MARKER} line's body is not valid JSON`)
  }
  return { logGroup: typeof logGroup === 'string' ? logGroup : '', platform, type, v, userId, body } as LogLineRecord
}
