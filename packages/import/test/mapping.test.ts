import { ConfigError, InvalidRecordError } from '@convotrack/core'
import { mapRecord, parseMapping, toIsoTimestamp } from '@convotrack/import'
import { describe, expect, it } from 'vitest'

describe('parseMapping', () => {
  it('reads field=source pairs, dotted paths included', () => {
    expect(
      parseMapping('text=body, userId=author.id,conversationId=ticket,timestamp=created_at,direction=kind'),
    ).toEqual({
      text: 'body',
      userId: 'author.id',
      conversationId: 'ticket',
      timestamp: 'created_at',
      direction: 'kind',
    })
    expect(parseMapping('')).toEqual({})
  })

  it('refuses unknown fields and empty sources with a message saying what to write', () => {
    expect(() => parseMapping('txt=body')).toThrow(ConfigError)
    expect(() => parseMapping('txt=body')).toThrow(/unknown field "txt"; map any of text, userId/)
    expect(() => parseMapping('text=')).toThrow(/needs a source column/)
  })
})

describe('mapRecord', () => {
  const map = parseMapping('text=body,userId=author.id,conversationId=ticket,timestamp=created_at,direction=kind')

  it('maps a row to a universal message with the source row as platformJson', () => {
    const row = {
      body: 'My order is late',
      author: { id: 'cust-7', name: 'Ana' },
      ticket: 'T-1',
      created_at: 1700000000,
      kind: 'incoming',
    }
    expect(mapRecord(row, map)).toEqual({
      direction: 'incoming',
      message: {
        text: 'My order is late',
        userId: 'cust-7',
        conversationId: 'T-1',
        platformJson: { ...row, timestamp: '2023-11-14T22:13:20.000Z' },
      },
    })
    expect(mapRecord({ ...row, kind: 'Outgoing' }, map).direction).toBe('outgoing')
    expect(mapRecord(row, map, { platformJson: false }).message).toEqual({
      text: 'My order is late',
      userId: 'cust-7',
      conversationId: 'T-1',
    })
  })

  it('reads fields of the same name by default, numbers as ids, and a string intent as its name', () => {
    expect(mapRecord({ text: 'hi', userId: 42, sessionId: 's', intent: 'greet' }, {}, { platformJson: false })).toEqual(
      {
        direction: 'incoming',
        message: { text: 'hi', userId: '42', sessionId: 's', intent: { name: 'greet' } },
      },
    )
    // CSV rows: empty optional cells are absent, not empty ids
    expect(
      mapRecord({ text: 'hi', userId: 'u', conversationId: '', direction: '' }, {}, { platformJson: false }).message,
    ).toEqual({ text: 'hi', userId: 'u' })
  })

  it('names the field and where it was read from for each bad row', () => {
    const bad = (row: unknown) => {
      try {
        mapRecord(row, map)
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidRecordError)
        return { path: (error as InvalidRecordError).path, message: (error as Error).message }
      }
      throw new Error('expected an InvalidRecordError')
    }
    expect(bad({ body: 'x' })).toEqual({
      path: 'userId',
      message: '`userId` is required and must be a non-empty string (got nothing) (read from "author.id")',
    })
    expect(bad({ author: { id: 'u' } }).path).toBe('text')
    expect(bad({ body: 'x', author: { id: 'u' }, kind: 'agent' })).toEqual({
      path: 'direction',
      message: '`direction` must be "incoming" or "outgoing" (got "agent") (read from "kind")',
    })
    expect(bad({ body: 'x', author: { id: 'u' }, created_at: 'yesterday' }).path).toBe('timestamp')
    expect(bad({ body: 'x', author: { id: 'u' }, ticket: { id: 1 } }).path).toBe('conversationId')
    expect(bad([1, 2]).path).toBe('')
    expect(bad({ body: 'x', author: { id: 'u' }, intent: { name: '' } }).path).toBe('intent.name')
  })
})

describe('toIsoTimestamp', () => {
  it('reads epoch seconds, epoch milliseconds and date strings', () => {
    expect(toIsoTimestamp(1700000000)).toBe('2023-11-14T22:13:20.000Z')
    expect(toIsoTimestamp(1700000000123)).toBe('2023-11-14T22:13:20.123Z')
    expect(toIsoTimestamp('1700000000')).toBe('2023-11-14T22:13:20.000Z')
    expect(toIsoTimestamp('2024-02-03T04:05:06+01:00')).toBe('2024-02-03T03:05:06.000Z')
    expect(toIsoTimestamp('not a date')).toBeUndefined()
    expect(toIsoTimestamp(true)).toBeUndefined()
  })
})
