/**
 * Payloads of the dashbot SDK 12.1.0's own examples and tests that are not separate files in
 * its npm package: the redactor test's records (`src/__tests__/redactor-test.js`, copied here
 * as they are, long Google contexts shortened) and the examples' messages
 * (`examples/*.js`, where they come from a live platform: rebuilt from the platform's
 * documented payloads). The JSON files of `src/__tests__/data` are loaded from the package.
 */

/** redactor-test.js `FACEBOOK_IN`: a Messenger webhook body. */
export const FACEBOOK_IN = {
  object: 'page',
  entry: [
    {
      id: '1761187137541529',
      time: 1509404264269,
      messaging: [
        {
          sender: { id: '967295313370594' },
          recipient: { id: '1761187137541529' },
          timestamp: 1509404263587,
          message: { mid: 'mid.$cAAZBymTGuo5loMaMo1fb4FEBBGHr', seq: 16231, text: '2222222222222222' },
        },
      ],
    },
  ],
}

/** redactor-test.js `GENERIC`. */
export const GENERIC = { text: '1111111111111111', userId: '1111111111111111' }

/** redactor-test.js `LINE_IN`: a LINE webhook event. */
export const LINE_IN = {
  type: 'message',
  source: { type: 'user', userId: 'U6qwr653uya19w874238' },
  message: { type: 'text', text: '1111111111111111' },
}

const googleRequest = (query: string, conversationId: string, id: string) => ({
  originalRequest: {
    source: 'google',
    version: '2',
    data: {
      isInSandbox: true,
      surface: { capabilities: [{ name: 'actions.capability.AUDIO_OUTPUT' }] },
      inputs: [
        {
          rawInputs: [{ query, inputType: 'VOICE' }],
          arguments: [{ rawText: query, textValue: query, name: 'text' }],
          intent: 'actions.intent.TEXT',
        },
      ],
      user: {
        locale: 'en-US',
        userId: 'ABwppHGgPBN4EyaYddw4yEQjZV-eGsXEMCBs9UPwFw3gY1RbVH_fTkjtBUrl_DX1YLS8ZabzKF7wdel58A',
      },
      conversation: {
        conversationId,
        type: 'ACTIVE',
        conversationToken: "['_actions_on_google_','defaultwelcomeintent-followup']",
      },
    },
  },
  id,
  timestamp: '2017-10-30T18:51:48.219Z',
  lang: 'en-us',
  result: {
    source: 'agent',
    resolvedQuery: query,
    speech: '',
    action: 'input.number',
    actionIncomplete: false,
    parameters: { number: query },
    contexts: [{ name: '_actions_on_google_', parameters: { number: query, 'number.original': query }, lifespan: 99 }],
    metadata: {
      matchedParameters: [{ dataType: '@sys.number', name: 'number', value: '$number', isList: false }],
      intentName: 'input.number',
      intentId: '3131ff84-d308-4b87-83cb-89253b106b3a',
      webhookUsed: 'true',
      webhookForSlotFillingUsed: 'false',
      nluResponseTime: 39,
    },
    fulfillment: { speech: '', messages: [{ type: 0, speech: '' }] },
    score: 1,
  },
  status: { code: 200, errorType: 'success' },
  sessionId: conversationId,
})

/** redactor-test.js `GOOGLE_EXAMPLE_IN.request_body`: an api.ai v1 webhook request from Actions on Google. */
export const GOOGLE_IN_REQUEST = googleRequest(
  '1111111111111111',
  '1509389503392',
  'afbb42e0-33d7-40e1-a15c-b61e01cf1dec',
)

/** redactor-test.js `GOOGLE_EXAMPLE_OUT`: its request and the answer `message`. */
export const GOOGLE_OUT = {
  request: googleRequest('2222222222222222', '1509402994514', '5776e22222222222222225-6cf1-454f-8545-e043348219ad'),
  message: {
    speech: 'You said a 2222222222222222',
    contextOut: [],
    data: { google: { expectUserResponse: false, isSsml: false, noInputPrompts: [] } },
  },
}

/** An Actions on Google conversation API v1 request (`ActionsSdkApp`, examples/google-example-actions-sdk.js). */
export const AOG_V1_REQUEST = {
  user: { user_id: 'aog-user-1' },
  conversation: { conversation_id: 'aog-conv-1', type: 2 },
  inputs: [{ intent: 'assistant.intent.action.TEXT', raw_inputs: [{ input_type: 2, query: 'seven' }] }],
}

/** Its answer (`assistant.askForText`). */
export const AOG_V1_RESPONSE = {
  expect_user_response: true,
  expected_inputs: [
    {
      input_prompt: { initial_prompts: [{ text_to_speech: 'Too high. Guess another number between 1 and 10' }] },
      possible_intents: [{ intent: 'assistant.intent.action.TEXT' }],
    },
  ],
}

/** Slack `rtm.start` answer (examples/slack-example-no-botkit.js `logConnect(parsedData)`), shortened. */
export const RTM_START = {
  ok: true,
  url: 'wss://cerberus-xxxx.lb.slack-msgs.com/websocket/abc',
  self: { id: 'U0BOT', name: 'rightbot', prefs: {}, created: 1509000000 },
  team: { id: 'T0TEAM', name: 'Right Team', domain: 'right', prefs: {} },
  users: [{ id: 'U0USER', name: 'ada' }],
  channels: [],
}
