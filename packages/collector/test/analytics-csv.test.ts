/**
 * `?format=csv` over HTTP on the analytics routes and the older reports: `text/csv`, a download
 * name, RFC 4180 rows equal to the JSON answer's, a formula-like cell neutralised, and 400s that
 * name the parameter (`format`, `period`, `steps`, `depth`, `q`).
 */
import { type Collector, startCollector } from '@convotrack/collector'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { item } from './store-contract'

let collector: Collector
const now = Date.now()

beforeAll(async () => {
  collector = await startCollector({ port: 0 })
  const add = (i: ReturnType<typeof item>) => collector.store.add(i.record, i.messages)
  await add(
    item(
      'demo',
      'universal',
      'incoming',
      { userId: 'ada', text: '=1+2', intent: { name: 'NotHandled' } },
      { at: now - 60_000 },
    ),
  )
  await add(
    item(
      'demo',
      'universal',
      'incoming',
      { userId: 'bob', text: 'hi, "there"', intent: { name: 'greet' }, platformUserJson: { locale: 'en' } },
      { at: now - 30_000 },
    ),
  )
  await add(
    item(
      'demo',
      'generic',
      'event',
      { type: 'revenueEvent', name: 'purchase', userId: 'bob', amount: 5 },
      { at: now - 20_000 },
    ),
  )
})
afterAll(async () => {
  await collector?.close()
})

const get = (path: string) => fetch(`${collector.url}${path}`)

describe('?format=csv', () => {
  it('answers text/csv with the JSON rows, for every analytics route and report', async () => {
    const cases: Array<[string, string]> = [
      ['/api/reports/overview', 'overview'],
      ['/api/reports/retention?period=day', 'retention'],
      ['/api/reports/funnel?steps=intent:greet,event:purchase', 'funnel'],
      ['/api/reports/paths?depth=2', 'paths'],
      ['/api/reports/not-handled/clusters', 'not-handled-clusters'],
      ['/api/search?q=there', 'search'],
      ['/api/reports/not-handled', 'not-handled'],
      ['/api/reports/intents', 'intents'],
      ['/api/reports/events', 'events'],
      ['/api/reports/segments', 'segments'],
      ['/api/reports/timeline?bucket=hour', 'timeline'],
      ['/api/conversations', 'conversations'],
    ]
    for (const [path, name] of cases) {
      const res = await get(`${path}${path.includes('?') ? '&' : '?'}format=csv`)
      expect(res.status, path).toBe(200)
      expect(res.headers.get('content-type'), path).toMatch(/^text\/csv/)
      expect(res.headers.get('content-disposition'), path).toBe(`attachment; filename="${name}.csv"`)
      const text = await res.text()
      expect(text.endsWith('\r\n'), path).toBe(true)
      expect(text.split('\r\n').length, path).toBeGreaterThan(2)
    }
  })

  it('the rows are the JSON rows; text is quoted and a formula is neutralised', async () => {
    const json = (await (await get('/api/reports/not-handled')).json()) as Array<{ text: string; count: number }>
    const csv = await (await get('/api/reports/not-handled?format=csv')).text()
    expect(csv.split('\r\n')[0]).toBe('text,count,users,lastTs,bots')
    expect(csv.split('\r\n')[1]?.startsWith(`'=1+2,${json[0]?.count},1,`)).toBe(true)
    const search = await (await get('/api/search?q=there&format=csv')).text()
    expect(search).toContain('"hi, ""there"""')
    const funnel = await (await get('/api/reports/funnel?steps=intent:greet,event:purchase&format=csv')).text()
    expect(funnel).toBe('step,users\r\nintent:greet,1\r\nevent:purchase,1\r\n')
  })

  it('a bad parameter is a 400 naming it', async () => {
    const cases: Array<[string, string]> = [
      ['/api/reports/overview?format=xlsx', 'format'],
      ['/api/reports/retention?period=year', 'period'],
      ['/api/reports/funnel?steps=greet', 'steps'],
      ['/api/reports/funnel', 'steps'],
      ['/api/reports/paths?depth=9', 'depth'],
      ['/api/search?q=', 'q'],
      ['/api/search?q=%22%22', 'q'],
      ['/api/search?q=a&next=nope', 'next'],
    ]
    for (const [path, param] of cases) {
      const res = await get(path)
      expect(res.status, path).toBe(400)
      expect(((await res.json()) as { error: { path: string } }).error.path, path).toBe(param)
    }
  })
})
