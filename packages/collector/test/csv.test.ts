import { describe, expect, it } from 'vitest'
import { csvCell, toCsv } from '../src/http/csv'

describe('CSV answers', () => {
  it('quotes as RFC 4180 says: commas, quotes and line breaks', () => {
    expect(csvCell('plain')).toBe('plain')
    expect(csvCell('a, b')).toBe('"a, b"')
    expect(csvCell('say "hi"')).toBe('"say ""hi"""')
    expect(csvCell('two\nlines')).toBe('"two\nlines"')
    expect(csvCell(null)).toBe('')
    expect(csvCell(3.5)).toBe('3.5')
    expect(csvCell(['a', 'b'])).toBe('a | b')
  })

  it('a text that would run as a spreadsheet formula is prefixed with a quote; numbers are not', () => {
    expect(csvCell('=HYPERLINK("http://x","click")')).toBe(`"'=HYPERLINK(""http://x"",""click"")"`)
    expect(csvCell('+1 555 0100 call me')).toBe("'+1 555 0100 call me")
    expect(csvCell('-cmd|calc')).toBe("'-cmd|calc")
    expect(csvCell('@SUM(A1)')).toBe("'@SUM(A1)")
    expect(csvCell('\tx')).toBe("'\tx")
    expect(csvCell('-12.5')).toBe('-12.5')
    expect(csvCell('+3e2')).toBe('+3e2')
    expect(csvCell(-4)).toBe('-4')
  })

  it('a header line, then one line per row, CRLF line ends', () => {
    const rows = [
      { text: 'where is my order', count: 3 },
      { text: '=1+1', count: 1 },
    ]
    expect(
      toCsv(rows, [
        { header: 'text', value: (r) => r.text },
        { header: 'count', value: (r) => r.count },
      ]),
    ).toBe("text,count\r\nwhere is my order,3\r\n'=1+1,1\r\n")
  })
})
