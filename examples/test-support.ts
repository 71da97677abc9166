/** For the examples' tests: POSTs a JSON body signed the way the collector signs its pause and operator calls. */
import { signPauseWebhook } from '@convotrack/core'

export function postSignedWebhook(url: string, secret: string, payload: object): Promise<Response> {
  const body = JSON.stringify(payload)
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signPauseWebhook({ secret, body }) },
    body,
  })
}
