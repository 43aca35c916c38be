import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { ServeChild } from '../../faults/serve-child.js'
import { skipOn, TRANSPORTS } from '../../support/transports.js'

const MIB = 1024 * 1024
const BODY_BYTES = 2 * MIB
const REQUESTS = 200
const AT_A_TIME = 10
const PIECE = Buffer.alloc(64 * 1024, 'x')

/** What a client that sends its whole body, whatever comes back, saw on its socket. */
interface Outcome {
  readonly received: string
  /** `EPIPE`, `ECONNRESET`…: the server cut the client off. */
  readonly error: string | undefined
}

/**
 * Sends `head` and `BODY_BYTES` of body on a fresh socket, in 64 KiB writes, as a client does that
 * does not read before it has sent (most do not), then reads until the server closes.
 */
function sendWhole(port: number, head: string, chunked: boolean): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    let received = ''
    let error: string | undefined
    socket.setEncoding('latin1')
    socket.setTimeout(20_000, () => socket.destroy(new Error('ETIMEDOUT')))
    socket.on('data', (chunk: string) => (received += chunk))
    socket.on('error', (cause: NodeJS.ErrnoException) => (error ??= cause.code ?? cause.message))
    socket.on('close', () => resolve({ received, error }))
    socket.on('connect', () => {
      socket.write(head)
      for (let sent = 0; sent < BODY_BYTES; sent += PIECE.length) {
        if (chunked) socket.write(`${PIECE.length.toString(16)}\r\n`)
        socket.write(PIECE)
        if (chunked) socket.write('\r\n')
      }
      // The write side stays open, as an HTTP client keeps it: the server ends the exchange.
      if (chunked) socket.write('0\r\n\r\n')
    })
  })
}

function assertRefused(outcome: Outcome, status: number, error: string, label: string): void {
  assert.equal(outcome.error, undefined, `${label}: the client was cut off`)
  const { received } = outcome
  assert.match(received, new RegExp(`^HTTP/1\\.1 ${status} `), `${label}: ${received.slice(0, 40)}`)
  const end = received.indexOf('\r\n\r\n')
  const length = Number(/\r\ncontent-length: ([0-9]+)\r\n/i.exec(received.slice(0, end + 2))?.[1])
  const body = JSON.parse(received.slice(end + 4, end + 4 + length)) as Record<string, unknown>
  assert.equal(body['error'], error, label)
  assert.equal(body['code'], status, label)
  assert.equal(typeof body['message'], 'string', label)
}

/** Sends `count` requests, `AT_A_TIME` at once; returns the first line of each failed check. */
async function sendMany(
  port: number,
  count: number,
  head: string,
  chunked: boolean,
  check: (outcome: Outcome, label: string) => void,
): Promise<string[]> {
  let next = 0
  const failures: string[] = []
  const worker = async (): Promise<void> => {
    while (next < count) {
      const index = next++
      const outcome = await sendWhole(port, head, chunked)
      try {
        check(outcome, `request ${index}`)
      } catch (error) {
        failures.push((error as Error).message.split('\n')[0]!)
      }
    }
  }
  await Promise.all(Array.from({ length: AT_A_TIME }, worker))
  return failures
}

for (const transport of TRANSPORTS) {
  const skip = skipOn(transport)
  describe(`the ${transport} transport reads a refused body before it closes`, { skip }, () => {
    let directory: string
    let server: ServeChild

    before(async () => {
      directory = mkdtempSync(join(tmpdir(), `refused-body-${transport}-`))
      server = await ServeChild.start(join(directory, 'db.sqlite'), { TRANSPORT: transport })
    })

    after(async () => {
      await server.kill()
      rmSync(directory, { recursive: true, force: true })
    })

    for (const chunked of [false, true]) {
      const framing = chunked ? 'chunked' : 'Content-Length'
      it(`answers ${REQUESTS} back-to-back 2 MiB POSTs (${framing}), ${AT_A_TIME} at a time, each with its 413 and none cut off`, async () => {
        // No token: the size is refused before anything else is looked at.
        const head =
          'POST /v3/beneficiaries HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
          (chunked ? 'Transfer-Encoding: chunked\r\n\r\n' : `Content-Length: ${BODY_BYTES}\r\n\r\n`)
        const failures = await sendMany(server.port, REQUESTS, head, chunked, (outcome, label) =>
          assertRefused(outcome, 413, 'payload_too_large', label),
        )
        assert.deepEqual(failures, [], `${failures.length} of ${REQUESTS} not answered cleanly`)
        assert.deepEqual(server.errors, [])
      })
    }

    it('answers a head over 3.5 KiB with a 2 MiB body behind it 431, and cuts none off', async () => {
      const head =
        'POST /v3/beneficiaries HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
        `X-Padding: ${'p'.repeat(3_700)}\r\nContent-Length: ${BODY_BYTES}\r\n\r\n`
      const failures = await sendMany(server.port, 40, head, false, (outcome, label) =>
        assertRefused(outcome, 431, 'request_header_fields_too_large', label),
      )
      assert.deepEqual(failures, [], `${failures.length} of 40 not answered cleanly`)
    })
  })
}
