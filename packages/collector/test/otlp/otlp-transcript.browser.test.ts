/**
 * An LLM bot's conversation, sent as OpenTelemetry traces by the AI SDK through the real OTLP
 * exporter, in the dashboard in real headless Chromium: the tool call shown as a tool call,
 * each answer's model and tokens, the link to the trace, the conversation's tokens and cost,
 * and the LLM usage view.
 */
import { type Collector, startCollector } from '@convotrack/collector'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openBrowserPage, requireChromium, screenshot } from '../support/browser'
import { chatAiSdk6, MODEL_ID } from '../support/llm-chat'
import { withOtlpExport } from '../support/otlp-capture'

let collector: Collector
let browser: Browser
let page: Page
let pageErrors: string[] = []
const poll = <T>(fn: () => Promise<T> | T) => expect.poll(fn, { timeout: 8000, interval: 50 })

beforeAll(async () => {
  requireChromium()
  collector = await startCollector({
    port: 0,
    demoBot: false,
    bots: [{ name: 'agent', apiKey: 'agent-key' }],
    traceUrl: 'http://localhost:16686/trace/{traceId}',
    llmPrices: { [MODEL_ID]: { input: 2.5, output: 10 } },
  })
  await withOtlpExport(
    `${collector.url}/v1/traces`,
    'protobuf',
    () => chatAiSdk6({ sessionId: 'web-7', userId: 'gil' }),
    {
      headers: { authorization: 'Bearer agent-key' },
    },
  )
  ;({ browser, page, pageErrors } = await openBrowserPage())
})

afterAll(async () => {
  await browser?.close()
  await collector?.close()
})

describe('an OTLP conversation in the dashboard', () => {
  it('shows the tool call as a tool call, tokens per answer and in total, and links each message to its trace', async () => {
    await page.goto(`${collector.url}/#/conversations/agent/web-7`)
    const messages = page.getByTestId('transcript-message')
    await poll(() => messages.count()).toBe(6)
    expect(await page.locator('[data-testid=transcript-message] .bubble').allTextContents()).toEqual([
      'hi',
      'Hello! How can I help?',
      'What is the weather in Paris?',
      'It is sunny in Paris, 21 °C.',
      'thanks',
      "You're welcome!",
    ])
    const tool = page.getByTestId('tool-call')
    expect(await tool.count()).toBe(1)
    expect(await tool.textContent()).toContain('get_weather({"city":"Paris"})')
    // The tool call sits with the answer of the weather question, not with the user's text.
    expect(await messages.nth(3).getByTestId('tool-call').count()).toBe(1)
    expect(await page.getByTestId('message-tokens').allTextContents()).toEqual([
      '10 in · 5 out tokens',
      '30 in · 10 out tokens',
      '10 in · 5 out tokens',
    ])
    // 50 × $2.5/M + 20 × $10/M = $0.000325
    expect(await page.getByTestId('conversation-tokens').textContent()).toBe('50 in · 20 out tokens · $0.0003')
    const links = page.getByTestId('trace-link')
    expect(await links.count()).toBe(6)
    const href = await links.first().getAttribute('href')
    const record = (await collector.store.transcript('agent', 'web-7'))[0]
    const traceId = JSON.parse((await collector.store.record(record?.recordId ?? 0))?.raw ?? '{}').platformJson.traceId
    expect(href).toBe(`http://localhost:16686/trace/${traceId}`)
    expect(await page.getByTestId('no-conversation-id').count()).toBe(0)
    await screenshot(page, 'otlp-transcript')
    expect(pageErrors).toEqual([])
  })

  it('the LLM usage view: tokens and cost per day and model', async () => {
    await page.goto(`${collector.url}/#/usage`)
    const line = page.getByTestId('usage-line')
    await poll(() => line.count()).toBe(1)
    // The day the answers happened (event time: the spans' times), in the browser's time zone.
    const answered = (await collector.store.transcript('agent', 'web-7'))[1]?.ts ?? 0
    const tz = await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone)
    const day = new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' })
    expect(await line.locator('td').allTextContents()).toEqual([
      day.format(answered),
      MODEL_ID,
      '3',
      '1',
      '50',
      '20',
      '$0.0003',
    ])
    expect(await page.getByTestId('usage-total').textContent()).toBe(
      '50 input and 20 output tokens in 3 answers · $0.0003',
    )
    expect(pageErrors).toEqual([])
  })
})
