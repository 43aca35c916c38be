import assert from 'node:assert/strict'
import { once } from 'node:events'
import { connect, createServer, type Server } from 'node:net'
import { describe, it } from 'node:test'
import { startServer, type RunningServer } from '../../../server/start-server.js'
import { createWorld } from '../server-fixtures.js'
import { skipOn, TRANSPORTS, TRANSPORTS_HERE } from '../../support/transports.js'

const PROMPT_MS = 1_000

/** Resolves with how long `promise` took to settle, in milliseconds. */
async function timed(promise: Promise<unknown>): Promise<number> {
  const started = performance.now()
  await promise
  return performance.now() - started
}

async function plainListener(): Promise<Server> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return server
}

function portOf(server: Server | RunningServer): number {
  if ('url' in server) return server.port
  return (server.address() as { port: number }).port
}

for (const transport of TRANSPORTS) {
  describe(`the ${transport} transport listening and closing`, { skip: skipOn(transport) }, () => {
    it('close() closes a keep-alive connection left idle at once, so that the process can exit', async () => {
      const world = await createWorld()
      const server = await startServer({ service: world.service, transport, port: 0 })
      const socket = connect(server.port, '127.0.0.1')
      await once(socket, 'connect')
      socket.setEncoding('utf8')
      let received = ''
      const answered = new Promise<void>((resolve) =>
        socket.on('data', (chunk: string) => {
          received += chunk
          if (received.includes('"status":"ok"')) resolve()
        }),
      )
      const closed = once(socket, 'close')
      socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n')
      await answered
      assert.match(received, /^HTTP\/1\.1 200 /)
      assert.doesNotMatch(received, /connection: close/i, 'the connection was kept alive')
      const closing = server.close(5_000)
      const closeMs = await timed(closing)
      const disconnectMs = await timed(closed)
      assert.ok(closeMs < PROMPT_MS, `close() took ${Math.round(closeMs)} ms`)
      assert.ok(disconnectMs < PROMPT_MS, `the idle connection stayed open ${disconnectMs} ms`)
      // Closing again is harmless.
      await server.close()
    })

    it('fails like node:http on a port another server listens on: EADDRINUSE, not a share of it', async () => {
      const world = await createWorld()
      const occupants: (Server | RunningServer)[] = [await plainListener()]
      for (const other of TRANSPORTS_HERE) {
        occupants.push(await startServer({ service: world.service, transport: other, port: 0 }))
      }
      try {
        for (const occupant of occupants) {
          const port = portOf(occupant)
          await assert.rejects(
            startServer({ service: world.service, transport, host: '127.0.0.1', port }),
            (error: NodeJS.ErrnoException) => {
              assert.equal(error.code, 'EADDRINUSE')
              assert.equal(error.syscall, 'listen')
              assert.equal(
                error.message,
                `listen EADDRINUSE: address already in use 127.0.0.1:${port}`,
              )
              return true
            },
          )
        }
      } finally {
        for (const occupant of occupants) {
          if ('url' in occupant) await occupant.close()
          else await new Promise((resolve) => occupant.close(resolve))
        }
      }
    })
  })
}
