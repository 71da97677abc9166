// The collector's JSON API (`/api/…`, relative to the page so a path prefix works).

export async function getJson(path) {
  const res = await fetch(path)
  const body = await res.json().catch(() => ({}))
  if (!res.ok) throw new Error(body?.error?.message ?? `HTTP ${res.status}`)
  return body
}

/**
 * A report that may be counted off the request path: its body (202 `{ preparing: true }` while
 * it is counted, or `refreshing` with an earlier answer) and `retryS`, the seconds its
 * `Retry-After` says to wait before asking again.
 */
export async function getReport(path) {
  const res = await fetch(path)
  const body = await res.json().catch(() => ({}))
  if (!res.ok) throw new Error(body?.error?.message ?? `HTTP ${res.status}`)
  return { body, retryS: Number(res.headers.get('Retry-After')) || 2 }
}

export async function postJson(path, payload) {
  const res = await fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(payload),
  })
  const body = await res.json().catch(() => ({}))
  if (!res.ok) throw new Error(body?.error?.message ?? `HTTP ${res.status}`)
  return body
}

/** A query string of the defined, non-empty params: q({ bot: '' , limit: 5 }) → '?limit=5'. */
export const q = (params) => {
  const p = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') p.set(k, String(v))
  const str = p.toString()
  return str ? `?${str}` : ''
}
