import { ConfigError } from '@convotrack/core'
import { MessengerSendError, trackedSendApi } from '@convotrack/messenger'
import nock from 'nock'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { GRAPH, type Harness, harness, SEND_PATH, SEND_URI, TOKEN } from './helpers'

beforeAll(() => {
  nock.disableNetConnect()
  nock.enableNetConnect('127.0.0.1')
})
afterAll(() => nock.enableNetConnect())

let h: Harness
beforeEach(async () => {
  h = await harness()
})
afterEach(async () => {
  nock.cleanAll()
  await h.close()
})

const message = { recipient: { id: 'USER_1' }, messaging_type: 'RESPONSE', message: { text: 'Your order shipped' } }

describe('trackedSendApi', () => {
  it('POSTs the message to the Send API with the token and resolves with the answer; the record has both', async () => {
    const sent: unknown[] = []
    const graph = nock(GRAPH, { reqheaders: { 'content-type': 'application/json' } })
      .post(SEND_PATH, (body) => sent.push(body) > 0)
      .query({ access_token: TOKEN })
      .reply(200, {
        recipient_id: 'USER_1',
        message_id: 'm_AG5Hz2Uq7tuwNEhXfYYKj8mJEM_QPpz5jdCK48PnKAjSdjfipqxqMvK8ma6AC8fplwlqLP_5cgXIbu7I3rBN0P',
      })
    const send = trackedSendApi(h.tracker, { accessToken: TOKEN })

    const answer = await h.tracker.withTurn(async () => {
      h.tracker.setOutgoingIntent({ name: 'shipping-update' })
      h.tracker.setUserMetadata({ firstName: 'Ada' })
      return send(message)
    })
    expect(graph.isDone()).toBe(true)
    expect(sent).toEqual([message])
    expect(answer).toEqual({ recipient_id: 'USER_1', message_id: expect.stringMatching(/^m_AG5/) })

    const [record, ...rest] = await h.records()
    expect(rest).toEqual([])
    expect([record?.platform, record?.type, record?.v, record?.apiKey]).toEqual([
      'facebook',
      'outgoing',
      '11.1.0-rest',
      'test-key',
    ])
    expect(record?.body).toEqual({
      uri: SEND_URI,
      method: 'POST',
      qs: { access_token: '' },
      json: message,
      responseBody: answer,
      intent: { name: 'shipping-update' },
      platformUserJson: { firstName: 'Ada' },
    })
    expect(record?.raw.includes(TOKEN)).toBe(false)
  })

  it('a refused send: tracked with the Graph API error body, and the caller gets that error', async () => {
    const errorBody = {
      error: {
        message: '(#100) No matching user found',
        type: 'OAuthException',
        code: 100,
        error_subcode: 2018001,
        fbtrace_id: 'AbCdEfGhIjK',
      },
    }
    nock(GRAPH).post(SEND_PATH).query(true).reply(400, errorBody)
    const send = trackedSendApi(h.tracker, { accessToken: TOKEN })
    const failure = await send({ recipient: { id: 'NOBODY' }, message: { text: 'hello?' } }).catch((e: unknown) => e)

    expect(failure).toBeInstanceOf(MessengerSendError)
    const err = failure as MessengerSendError
    expect(err.status).toBe(400)
    expect(err.body).toEqual(errorBody)
    expect(err.error).toEqual(errorBody.error)
    expect(err.message).toBe('Messenger Send API failed (400): (#100) No matching user found')

    const [record] = await h.records()
    expect(record?.body).toEqual({
      uri: SEND_URI,
      method: 'POST',
      qs: { access_token: '' },
      json: { recipient: { id: 'NOBODY' }, message: { text: 'hello?' } },
      responseBody: errorBody,
    })
    expect(h.errors).toEqual([])
  })

  it('graphApiUrl chooses the Graph API version (and host)', async () => {
    const graph = nock('https://graph.example.test')
      .post('/v19.0/me/messages')
      .query({ access_token: TOKEN })
      .reply(200, { recipient_id: 'U', message_id: 'm1' })
    const send = trackedSendApi(h.tracker, { accessToken: TOKEN, graphApiUrl: 'https://graph.example.test/v19.0/' })
    await send({ recipient: { id: 'U' }, message: { text: 'x' } })
    expect(graph.isDone()).toBe(true)
    expect((await h.records())[0]?.body.uri).toBe('https://graph.example.test/v19.0/me/messages')
  })

  it('sender actions are sent but not tracked (not messages)', async () => {
    const graph = nock(GRAPH)
      .post(SEND_PATH, { recipient: { id: 'U' }, sender_action: 'typing_on' })
      .query(true)
      .reply(200, { recipient_id: 'U' })
    const send = trackedSendApi(h.tracker, { accessToken: TOKEN })
    expect(await send({ recipient: { id: 'U' }, sender_action: 'typing_on' })).toEqual({ recipient_id: 'U' })
    expect(graph.isDone()).toBe(true)
    expect(await h.records()).toEqual([])
  })

  it('a network failure rejects with the fetch error and is not tracked (there is no answer to record)', async () => {
    nock(GRAPH).post(SEND_PATH).query(true).replyWithError('socket hang up')
    const send = trackedSendApi(h.tracker, { accessToken: TOKEN })
    const failure = await send(message).catch((e: unknown) => e)
    expect(failure).toBeInstanceOf(Error)
    expect(failure).not.toBeInstanceOf(MessengerSendError)
    expect(String((failure as Error).message) + String((failure as Error).cause)).toMatch(/socket hang up/)
    expect(await h.records()).toEqual([])
  })

  it('an invalid message is reported to onError; the Graph API still decides', async () => {
    const errorBody = {
      error: { message: '(#100) The parameter recipient is required', type: 'OAuthException', code: 100 },
    }
    nock(GRAPH).post(SEND_PATH).query(true).reply(400, errorBody)
    const send = trackedSendApi(h.tracker, { accessToken: TOKEN })
    await expect(send({ message: { text: 'to nobody' } } as never)).rejects.toMatchObject({
      status: 400,
      body: errorBody,
    })
    expect(h.errors.map((e) => e.code)).toEqual(['invalid_record'])
    expect(h.errors[0]?.message).toMatch(/json\.recipient/)
  })

  it('needs an access token', () => {
    expect(() => trackedSendApi(h.tracker, { accessToken: '' })).toThrow(ConfigError)
  })
})
