import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { formatOf, readCsv, readJsonLines, readRecordsFile, type SourceLine } from '@convotrack/import'
import { describe, expect, it } from 'vitest'

const dir = mkdtempSync(join(tmpdir(), 'convotrack-readers-'))
const file = (name: string, text: string) => {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}
const collect = async (it: AsyncIterable<SourceLine>) => {
  const out: Array<{ line: number; data?: unknown; error?: boolean }> = []
  for await (const row of it) out.push(row.error ? { line: row.line, error: true } : { line: row.line, data: row.data })
  return out
}

describe('readJsonLines', () => {
  it('numbers lines as in the file, skips blank ones and reports unparsable ones', async () => {
    const path = file('a.jsonl', '\uFEFF{"text":"a"}\r\n\n{"text":"b"}\n{oops\n  \n[1]\n{"text":"c"}')
    expect(await collect(readJsonLines(path))).toEqual([
      { line: 1, data: { text: 'a' } },
      { line: 3, data: { text: 'b' } },
      { line: 4, error: true },
      { line: 6, data: [1] },
      { line: 7, data: { text: 'c' } },
    ])
  })
})

describe('readJsonLines errors', () => {
  it('names the column within the file line, in the same words whatever the Node version', async () => {
    const path = file('e.jsonl', '{"ok":1}\n{"text":"cut off\n{"a":1}}\n{oops}\n')
    const errors: Array<[number, string | undefined]> = []
    for await (const row of readJsonLines(path)) if (row.error) errors.push([row.line, row.error])
    expect(errors).toEqual([
      [2, 'is not valid JSON at column 17 (Unterminated string in JSON)'],
      [3, 'is not valid JSON at column 8 (Unexpected non-whitespace character after JSON)'],
      [4, "is not valid JSON at column 2 (Expected property name or '}' in JSON)"],
    ])
  })
})

describe('readCsv', () => {
  it('keys rows by the header, numbers them by their first line, reports malformed rows in order', async () => {
    const path = file('a.csv', 'text,userId\nhello,u1\n\n"two\nlines",u2\nbad,u3,extra\n"comma, inside",u4\n')
    const rows = await collect(readCsv(path))
    expect(rows).toEqual([
      { line: 2, data: { text: 'hello', userId: 'u1' } },
      { line: 4, data: { text: 'two\nlines', userId: 'u2' } },
      { line: 6, error: true },
      { line: 7, data: { text: 'comma, inside', userId: 'u4' } },
    ])
  })

  it('reports an unclosed quote where it is and stops there', async () => {
    const rows = await collect(readCsv(file('b.csv', 'text,userId\nok,u1\n"never closed,u2\nmore,u3\n')))
    expect(rows[0]).toEqual({ line: 2, data: { text: 'ok', userId: 'u1' } })
    expect(rows.at(-1)?.error).toBe(true)
    expect(rows).toHaveLength(2)
  })

  it('numbers rows of a CRLF file by their first line, after quoted fields that span lines', async () => {
    const text = [
      'text,userId',
      '"a\r\nb\r\nc",u1', // 2–4
      '',
      'plain,u2', // 6
      'bad,u3,extra', // 7
      '"x\ny",u3', // 8–9 (a bare LF inside a CRLF file)
      '"p\r\nq",u9,z', // 10–11, malformed
      'last,u4', // 12
    ].join('\r\n')
    expect(await collect(readCsv(file('crlf.csv', `${text}\r\n`)))).toEqual([
      { line: 2, data: { text: 'a\r\nb\r\nc', userId: 'u1' } },
      { line: 6, data: { text: 'plain', userId: 'u2' } },
      { line: 7, error: true },
      { line: 8, data: { text: 'x\ny', userId: 'u3' } },
      { line: 10, error: true },
      { line: 12, data: { text: 'last', userId: 'u4' } },
    ])
  })

  it('takes another delimiter', async () => {
    expect(await collect(readCsv(file('c.csv', 'text;userId\nhi;u1\n'), { delimiter: ';' }))).toEqual([
      { line: 2, data: { text: 'hi', userId: 'u1' } },
    ])
  })
})

describe('formatOf', () => {
  it('tells the format from the extension', () => {
    expect(formatOf('x.CSV')).toBe('csv')
    expect(formatOf('x.ndjson')).toBe('jsonl')
    expect(() => formatOf('x.txt')).toThrow(/--format/)
    expect(() => formatOf('x.json')).toThrow(/--format/) // a JSON array is not JSON Lines
  })

  it('reads a .tsv file as tab-separated', async () => {
    const rows: unknown[] = []
    for await (const row of readRecordsFile(file('d.tsv', 'text\tuserId\nhello, world\tu1\n'))) rows.push(row.data)
    expect(rows).toEqual([{ text: 'hello, world', userId: 'u1' }])
  })
})
