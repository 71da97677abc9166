// A minimal keep-alive tracking sink in its own process (so it does not share the client's
// event loop): answers every POST with 200 after reading the body; prints its port.
import http from 'node:http'

let count = 0
const server = http.createServer({ keepAlive: true, keepAliveTimeout: 30_000 }, (req, res) => {
  req.resume()
  req.on('end', () => {
    count++
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '11' })
    res.end('{"ok":true}')
  })
})
server.listen(0, '127.0.0.1', () => process.send?.({ port: server.address().port }))
process.on('message', (m) => {
  if (m === 'count') process.send?.({ count })
  if (m === 'stop') server.close(() => process.exit(0))
})
