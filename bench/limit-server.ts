/**
 * The limit of the benchmark: a bare uWebSockets.js app that answers the detail route with a
 * constant JSON body of the size of a real detail. No token, no limiter, no database, no log:
 * whatever the service reaches is measured against what this machine's loopback and one core
 * can do at all.
 *
 * Usage: `node dist/bench/limit-server.js --port 4100 --body bench/.data/detail.json`
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import uWS from 'uWebSockets.js'

const { values } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '4100' },
    body: { type: 'string' },
  },
})

const body =
  values.body === undefined
    ? JSON.stringify({ id: 1, first_name: 'Maria', last_name: 'Rossi' })
    : readFileSync(values.body, 'utf8').trim()
const port = Number(values.port)
if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new TypeError('--port: 1 to 65535')

let listenSocket: uWS.us_listen_socket | undefined

uWS
  .App()
  .get('/v3/beneficiaries/:id', (res) => {
    res
      .writeStatus('200 OK')
      .writeHeader('content-type', 'application/json; charset=utf-8')
      .end(body)
  })
  .get('/healthz', (res) => {
    res.writeHeader('content-type', 'application/json; charset=utf-8').end('{"status":"ok"}')
  })
  .any('/*', (res) => {
    res.writeStatus('404 Not Found').end()
  })
  .listen(values.host, port, (socket) => {
    if (socket === false) {
      console.error(`limit: cannot listen on ${values.host}:${port}`)
      process.exit(1)
    }
    listenSocket = socket
    console.log(`limit: listening on ${values.host}:${port} (${Buffer.byteLength(body)} bytes)`)
  })

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (listenSocket !== undefined) uWS.us_listen_socket_close(listenSocket)
    process.exit(0)
  })
}
