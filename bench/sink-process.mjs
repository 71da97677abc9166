// A minimal keep-alive tracking sink in its own process (so it does not share the client's
// event loop): answers every POST after reading the body; prints its port. Optional faults,
// passed as JSON in argv[2]: { latencyMs, bucketPerSec (token bucket, 429 beyond), random429,
// retryAfterSec }. Counts accepted records (IPC: 'count', 'reset', 'stop').
import http from 'node:http'

const faults = JSON.parse(process.argv[2] ?? '{}')
let count = 0
let limited = 0
let tokens = faults.bucketPerSec ?? 0
let refilled = Date.now()
const refuse = () => {
  if (faults.random429 && Math.random() < faults.random429) return true
  if (!faults.bucketPerSec) return false
  const now = Date.now()
  tokens = Math.min(faults.bucketPerSec, tokens + ((now - refilled) * faults.bucketPerSec) / 1000)
  refilled = now
  if (tokens < 1) return true
  tokens--
  return false
}
const server = http.createServer({ keepAlive: true, keepAliveTimeout: 30_000 }, (req, res) => {
  req.resume()
  req.on('end', () => {
    const answer = () => {
      if (refuse()) {
        limited++
        res.writeHead(429, { 'retry-after': String(faults.retryAfterSec ?? 1), 'content-length': '0' })
        return res.end()
      }
      count++
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '11' })
      res.end('{"ok":true}')
    }
    if (faults.latencyMs) setTimeout(answer, faults.latencyMs)
    else answer()
  })
})
server.maxConnections = 10_000
server.listen(0, '127.0.0.1', 1024, () => process.send?.({ port: server.address().port }))
process.on('message', (m) => {
  if (m === 'count') process.send?.({ count, limited })
  if (m === 'reset') {
    count = 0
    limited = 0
    process.send?.({ count })
  }
  if (m === 'stop') server.close(() => process.exit(0))
  setTimeout(() => {}, 0)
})
process.on('disconnect', () => process.exit(0))
