import assert from 'node:assert/strict'
import { connect, type Socket } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { startServer, type RunningServer } from '../../../server/start-server.js'
import type { TransportName } from '../../../server/transports/transport.js'
import { OpenApiResponseValidator } from '../openapi-validator.js'
import { createWorld, MARIO, type World } from '../server-fixtures.js'
import { skipOn } from '../../support/transports.js'

/** One answer read off a raw connection. */
interface RawAnswer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  /** The bytes after the head that belong to this answer. */
  readonly body: string
}

/**
 * Sends `requests` one after another on one connection, each once the previous answer is
 * complete (a 304, a 204 and a HEAD answer end with their head; others carry Content-Length),
 * and resolves with the answers; rejects when the connection closes before the last one.
 */
function onOneConnection(port: number, requests: readonly string[]): Promise<RawAnswer[]> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(port, '127.0.0.1')
    const answers: RawAnswer[] = []
    let buffer = ''
    const next = (): void => {
      if (answers.length === requests.length) {
        socket.destroy()
        resolve(answers)
      } else {
        socket.write(requests[answers.length]!)
      }
    }
    socket.setEncoding('latin1')
    socket.on('connect', next)
    socket.on('data', (chunk: string) => {
      buffer += chunk
      const end = buffer.indexOf('\r\n\r\n')
      if (end === -1) return
      const [statusLine, ...fields] = buffer.slice(0, end).split('\r\n')
      const headers: Record<string, string> = {}
      for (const field of fields) {
        const colon = field.indexOf(':')
        headers[field.slice(0, colon).toLowerCase()] = field.slice(colon + 1).trim()
      }
      const status = Number(statusLine!.split(' ')[1])
      const bodiless =
        status === 304 || status === 204 || requests[answers.length]!.startsWith('HEAD')
      const length = bodiless ? 0 : Number(headers['content-length'] ?? 0)
      if (buffer.length < end + 4 + length) return
      answers.push({ status, headers, body: buffer.slice(end + 4, end + 4 + length) })
      buffer = buffer.slice(end + 4 + length)
      next()
    })
    socket.on('error', reject)
    socket.on('close', () => {
      if (answers.length < requests.length) {
        reject(new Error(`closed after ${answers.length} answers; left over: ${buffer}`))
      }
    })
  })
}

function conditionalGetOver(transport: TransportName): void {
  describe(`If-None-Match over ${transport}`, { skip: skipOn(transport) }, () => {
    const validator = new OpenApiResponseValidator()
    let world: World
    let server: RunningServer
    let token: string
    let id: number

    before(async () => {
      world = await createWorld()
      server = await startServer({ service: world.service, transport, port: 0 })
      const writer = world.writer
      const login = await fetch(`${server.url}/v3/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_id: writer.client_id, client_secret: writer.client_secret }),
      })
      token = String(((await login.json()) as Record<string, unknown>)['access_token'])
      const created = await fetch(`${server.url}/v3/beneficiaries`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify(MARIO),
      })
      id = Number(((await created.json()) as Record<string, unknown>)['id'])
    })

    after(() => server.close(1_000))

    it('answers 304 without a body on GET and HEAD of the detail and the history', async () => {
      for (const path of [`/v3/beneficiaries/${id}`, `/v3/beneficiaries/${id}/history`]) {
        const auth = { authorization: `Bearer ${token}` }
        const first = await fetch(server.url + path, { headers: auth })
        assert.equal(first.status, 200)
        await first.text()
        const etag = first.headers.get('etag')!
        for (const method of ['GET', 'HEAD']) {
          for (const field of [etag, `W/${etag}`, `"zz", ${etag}`, '*']) {
            const answer = await fetch(server.url + path, {
              method,
              headers: { ...auth, 'if-none-match': field },
            })
            assert.equal(answer.status, 304, `${method} ${path} ${field}`)
            assert.equal(await answer.text(), '')
            assert.equal(answer.headers.get('etag'), etag)
            assert.equal(answer.headers.get('content-type'), null)
            const headers = Object.fromEntries(answer.headers)
            const problems = validator.check(method, path, {
              status: 304,
              headers,
              body: undefined,
            })
            assert.deepEqual(problems, [])
          }
        }
        const changed = await fetch(server.url + path, {
          headers: { ...auth, 'if-none-match': '"v999", "h999"' },
        })
        assert.equal(changed.status, 200)
        assert.equal(changed.headers.get('etag'), etag)
        assert.ok((await changed.text()).length > 0)
      }
    })

    it('keeps the connection usable after a 304: the next answer on it is whole', async () => {
      const path = `/v3/beneficiaries/${id}`
      const head = `Host: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n`
      const answers = await onOneConnection(server.port, [
        `GET ${path} HTTP/1.1\r\n${head}\r\n`,
        `GET ${path} HTTP/1.1\r\n${head}If-None-Match: *\r\n\r\n`,
        `HEAD ${path}/history HTTP/1.1\r\n${head}If-None-Match: *\r\n\r\n`,
        `GET ${path} HTTP/1.1\r\n${head}If-None-Match: "v0"\r\n\r\n`,
      ])
      assert.deepEqual(
        answers.map((answer) => answer.status),
        [200, 304, 304, 200],
      )
      assert.equal(answers[1]!.body, '')
      assert.equal(answers[1]!.headers['etag'], answers[0]!.headers['etag'])
      assert.equal(answers[1]!.headers['transfer-encoding'], undefined)
      assert.deepEqual(JSON.parse(answers[3]!.body), JSON.parse(answers[0]!.body))
    })

    it('still answers 404 for a missing record and 401 without a token', async () => {
      const headers = { 'if-none-match': '*', authorization: `Bearer ${token}` }
      for (const path of ['/v3/beneficiaries/424242', '/v3/beneficiaries/424242/history']) {
        const missing = await fetch(server.url + path, { headers })
        assert.equal(missing.status, 404)
        assert.equal(((await missing.json()) as Record<string, unknown>)['error'], 'not_found')
      }
      const anonymous = await fetch(`${server.url}/v3/beneficiaries/${id}`, {
        headers: { 'if-none-match': '*' },
      })
      assert.equal(anonymous.status, 401)
      await anonymous.text()
    })
  })
}

conditionalGetOver('node')
conditionalGetOver('uws')
