import { describe, expect, it } from 'vitest'
import { localeOf, segmentsOf } from '../src/store/store-rows'

describe('audience segments', () => {
  it('count one locale once whatever its spelling (Messenger en_GB, Alexa en-GB)', () => {
    const users = [{ locale: 'en_GB' }, { locale: 'en-GB' }, { locale: 'EN-gb' }, { locale: 'de_DE' }, { locale: 'en' }]
    expect(segmentsOf(users.map((u) => JSON.stringify(u)))).toEqual([
      {
        field: 'locale',
        values: [
          { value: 'en_GB', users: 3 },
          { value: 'de_DE', users: 1 },
          { value: 'en', users: 1 },
        ],
      },
    ])
  })

  it('leave other fields as sent', () => {
    expect(localeOf('pt-br')).toBe('pt_BR')
    expect(segmentsOf([JSON.stringify({ sku: 'ab-CD' }), JSON.stringify({ sku: 'ab_CD' })])).toEqual([
      {
        field: 'sku',
        values: [
          { value: 'ab-CD', users: 1 },
          { value: 'ab_CD', users: 1 },
        ],
      },
    ])
  })
})
