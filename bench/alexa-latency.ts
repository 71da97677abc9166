/**
 * Added latency per Alexa skill invocation: the same ask-sdk-core skill with tracking off and
 * on, in the same run, against a local tracking endpoint (test/support/sink-server.ts).
 *
 *   npx tsx bench/alexa-latency.ts            (from the repo root; ROUNDS=5000 to change the size)
 *
 * Variants, invoked in rotating order each round so drift hits them alike:
 * - off:          no tracking at all (the reference)
 * - on:           voice.instrument(builder), records posted in the background (a server)
 * - on+lambda:    the same under a Lambda context: the answer waits until both records are
 *                 delivered to the local endpoint (bounded by flushTimeoutMs)
 * - on+logs:      logIntegration: records written as log lines (to a no-op writer here)
 * Prints a JSON object, then a table.
 */
import { createRequire } from 'node:module'
import { alexaTracking } from '@convotrack/alexa'
import { createTracker } from '@convotrack/core'
import { startSink } from '../test/support/sink-server'

// ask-sdk-core is a dependency of packages/alexa, not of bench/: load it from there.
const Alexa = createRequire(new URL('../packages/alexa/package.json', import.meta.url))(
  'ask-sdk-core',
) as typeof import('../packages/alexa/node_modules/ask-sdk-core')
type HandlerInput = import('../packages/alexa/node_modules/ask-sdk-core').HandlerInput
type Skill = import('../packages/alexa/node_modules/ask-sdk-core').Skill
type RequestEnvelope = import('../packages/alexa/node_modules/ask-sdk-model').RequestEnvelope

const ROUNDS = Number(process.env.ROUNDS ?? 3_000)
const WARMUP = Math.min(500, Math.floor(ROUNDS / 5))

type Voice = ReturnType<typeof alexaTracking>

function buildSkill(voice: Voice | undefined): Skill {
  const handler = {
    canHandle: (input: HandlerInput) => Alexa.getRequestType(input.requestEnvelope) === 'IntentRequest',
    handle: (input: HandlerInput) => {
      const planet = Alexa.getSlotValue(input.requestEnvelope, 'planet') ?? 'space'
      voice?.setOutgoingIntent(input, {
        name: 'GetFactIntent',
        inputs: [{ name: 'planet', value: planet }],
        confidence: 1,
      })
      input.attributesManager.setSessionAttributes({ lastPlanet: planet })
      return input.responseBuilder.speak(`A day on ${planet} is long.`).reprompt('Another fact?').getResponse()
    },
  }
  const builder = Alexa.SkillBuilders.custom()
  return (voice ? voice.instrument(builder) : builder).addRequestHandlers(handler).create()
}

let seq = 0
function envelope(): RequestEnvelope {
  seq++
  const userId = `amzn1.ask.account.BENCH${seq % 50}`
  return {
    version: '1.0',
    session: {
      new: false,
      sessionId: `amzn1.echo-api.session.${seq}`,
      application: { applicationId: 'amzn1.ask.skill.bench' },
      attributes: { visits: seq % 7 },
      user: { userId },
    },
    context: {
      System: {
        application: { applicationId: 'amzn1.ask.skill.bench' },
        user: { userId },
        device: { deviceId: 'amzn1.ask.device.BENCH', supportedInterfaces: {} },
        apiEndpoint: 'https://api.amazonalexa.com',
        apiAccessToken: 'token',
      },
    },
    request: {
      type: 'IntentRequest',
      requestId: `amzn1.echo-api.request.${seq}`,
      timestamp: '2024-05-01T10:00:00Z',
      locale: 'en-US',
      dialogState: 'COMPLETED',
      intent: {
        name: 'GetFactIntent',
        confirmationStatus: 'NONE',
        slots: { planet: { name: 'planet', value: 'Mars', confirmationStatus: 'NONE' } },
      },
    },
  } as unknown as RequestEnvelope
}

function lambdaContext() {
  return { functionName: 'bench', awsRequestId: `r${seq}`, getRemainingTimeInMillis: () => 7_000 }
}

function stats(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b)
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] as number
  return { median: at(0.5), p99: at(0.99), mean: s.reduce((a, b) => a + b, 0) / s.length }
}

const round3 = (n: number) => Math.round(n * 1000) / 1000

async function main() {
  const sink = await startSink()
  const trackerBg = createTracker({ apiKey: 'bench-key', baseUrl: sink.url })
  const trackerLambda = createTracker({ apiKey: 'bench-key', baseUrl: sink.url })
  const trackerLogs = createTracker({ apiKey: 'bench-key', baseUrl: sink.url })
  const logsVoice = alexaTracking(trackerLogs)
  let logBytes = 0
  logsVoice.logIntegration({
    logGroupName: '/aws/lambda/bench',
    write: (line) => {
      logBytes += line.length
    },
  })

  const variants: Array<{ name: string; skill: Skill; context: () => unknown }> = [
    { name: 'off', skill: buildSkill(undefined), context: () => undefined },
    { name: 'on', skill: buildSkill(alexaTracking(trackerBg, { flush: false })), context: () => undefined },
    { name: 'on+lambda', skill: buildSkill(alexaTracking(trackerLambda)), context: lambdaContext },
    { name: 'on+logs', skill: buildSkill(logsVoice), context: lambdaContext },
  ]
  const samples = new Map(variants.map((v) => [v.name, [] as number[]]))

  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    for (let k = 0; k < variants.length; k++) {
      const v = variants[(round + k) % variants.length]!
      const e = envelope()
      const ctx = v.context()
      const t0 = process.hrtime.bigint()
      await v.skill.invoke(e, ctx)
      const ms = Number(process.hrtime.bigint() - t0) / 1e6
      if (round >= WARMUP) samples.get(v.name)!.push(ms)
    }
  }
  await Promise.all([trackerBg.flush(10_000), trackerLambda.flush(10_000)])

  const off = stats(samples.get('off')!)
  const results = variants.map((v) => {
    const s = stats(samples.get(v.name)!)
    return {
      variant: v.name,
      medianMs: round3(s.median),
      p99Ms: round3(s.p99),
      meanMs: round3(s.mean),
      addedMedianMs: round3(s.median - off.median),
      addedP99Ms: round3(s.p99 - off.p99),
      medianRatio: round3(s.median / off.median),
    }
  })
  const report = {
    benchmark: 'alexa-latency',
    node: process.versions.node,
    rounds: ROUNDS,
    warmup: WARMUP,
    endpoint: 'local sink on 127.0.0.1 (test/support/sink-server.ts)',
    recordsDelivered: sink.records.length,
    expectedRecords: 2 * 2 * (WARMUP + ROUNDS),
    logLineBytes: logBytes,
    delivery: Object.fromEntries(
      [
        ['on', trackerBg],
        ['on+lambda', trackerLambda],
      ].map(([name, t]) => {
        const { sent, retried, failed, dropped } = (t as typeof trackerBg).stats()
        return [name, { sent, retried, failed, dropped }]
      }),
    ),
    results,
  }
  console.log(JSON.stringify(report, null, 2))
  console.log()
  console.log('variant     median ms   p99 ms   added median   added p99   median ratio')
  for (const r of results)
    console.log(
      `${r.variant.padEnd(10)} ${r.medianMs.toFixed(3).padStart(9)} ${r.p99Ms.toFixed(3).padStart(8)} ${r.addedMedianMs.toFixed(3).padStart(14)} ${r.addedP99Ms
        .toFixed(3)
        .padStart(11)} ${`${r.medianRatio.toFixed(2)}x`.padStart(14)}`,
    )
  await Promise.all([trackerBg.close(1_000), trackerLambda.close(1_000), trackerLogs.close(1_000)])
  await sink.close()
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
