import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { after, before, describe, it } from 'node:test'
import fc from 'fast-check'
import { startServer, type RunningServer } from '../../server/start-server.js'
import { MAX_HEADER_BYTES, MAX_HEADER_FIELDS } from '../../server/transports/transport.js'
import { MARIO } from '../server/server-fixtures.js'
import { skipOn, TRANSPORTS } from '../support/transports.js'
import {
  accessToken,
  assertErrorBody,
  assertNoLeak,
  openSqliteWorld,
  settings,
  storageDigest,
  type SqliteWorld,
} from './hostile-fixtures.js'

// Raw bytes over a real socket to a real server on 127.0.0.1, for both transports: hostile
// request lines, targets, header values and bodies (framed so that each request ends, since a
// request still being sent is the timeout's business, not this test's). Whatever arrives, the
// answer is a clean HTTP response below 500 or a closed connection, never a stack trace; a
// refusal changes nothing; and after every batch the server still answers its probes.

/**
 * One request, as bytes, and what it deserves: `standard`, a method both transports route, a
 * target in origin form (`/…`) without a space or a tab, and no control character in the
 * request line and headers, gets an HTTP answer; `odd`, another method name, an answer or a
 * prompt close (uWebSockets.js closes at once on methods it does not know, node:http answers 400
 * or 405); `malformed` an answer, a close or silence (uWebSockets.js stays silent on `*` and
 * absolute-form targets, targets with a space or a tab, control characters and bare LFs until
 * its idle timeout).
 */
interface RawRequest {
  readonly bytes: Buffer
  readonly method: string
  readonly kind: 'standard' | 'odd' | 'malformed'
  readonly label: string
}

const STANDARD_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'HEAD', 'PATCH', 'OPTIONS', 'TRACE']

const KNOWN_PATHS = [
  '/healthz',
  '/readyz',
  '/v3/openapi.json',
  '/v3/auth/login',
  '/v3/auth/refresh',
  '/v3/auth/logout',
  '/v3/beneficiaries',
  '/v3/beneficiaries/1',
  '/v3/beneficiaries/2/status',
  '/v3/beneficiaries/1/history',
  '/v3/beneficiaries/0',
  '/v3/beneficiaries/-1',
  '/v3/beneficiaries/99999999999999999999',
  '/v3/beneficiaries/1%00',
  '/v3/beneficiaries/..%2F..%2Fetc%2Fpasswd',
  '/v3//beneficiaries',
  '/V3/BENEFICIARIES',
  '/v3/beneficiaries?search=%27%3B%20DROP%20TABLE%20beneficiaries%3B--',
  '/v3/beneficiaries?page=%zz',
  '/v3/beneficiaries?per_page=1e9&page=-1&sort=__proto__',
  '/v3/beneficiaries?search=%ED%A0%80',
  '*',
  'http://127.0.0.1/v3/beneficiaries',
]

const ROUTES: readonly (readonly [string, string])[] = [
  ['POST', '/v3/auth/login'],
  ['POST', '/v3/auth/refresh'],
  ['POST', '/v3/auth/logout'],
  ['POST', '/v3/beneficiaries'],
  ['GET', '/v3/beneficiaries'],
  ['PUT', '/v3/beneficiaries/2'],
  ['POST', '/v3/beneficiaries/2/status'],
  ['GET', '/v3/beneficiaries/2/history'],
  ['DELETE', '/v3/beneficiaries/987654'],
]

/** Visible ASCII without space: a target or a header value a parser must take. */
const visible = fc.string({
  unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 40,
})
/** Any byte but CR and LF, as a latin1 character: what a hostile client puts in a header. */
const anyByte = fc.string({
  unit: fc
    .integer({ min: 0, max: 255 })
    .filter((c) => c !== 10 && c !== 13)
    .map((c) => String.fromCharCode(c)),
  maxLength: 40,
})

/** Printable ASCII and the upper half of latin1: obs-text, which HTTP allows in header values. */
const latin1 = fc.string({
  unit: fc
    .integer({ min: 0x20, max: 0xff })
    .filter((c) => c < 0x7f || c >= 0x80)
    .map((c) => String.fromCharCode(c)),
  maxLength: 40,
})

const headerName = fc.oneof(
  fc.constantFrom(
    'content-type',
    'authorization',
    'if-match',
    'idempotency-key',
    'x-request-id',
    'x-forwarded-for',
    'accept',
    'accept-encoding',
    'cookie',
    'expect',
    'origin',
  ),
  fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,15}$/),
)

/**
 * No control character but tab (obs-text, bytes 0x80–0xFF, is allowed): a request that both
 * parsers read, and so one that may reach the handler. Only requests that are not clean may go
 * unanswered, and those never reach the handler on either transport.
 */
function isClean(text: string): boolean {
  return /^[\x20-\x7e\x80-\xff\t]*$/.test(text)
}

/** Stands for a token of a new session, issued just before the request is sent. */
const FRESH_TOKEN = 'FRESH-TOKEN-OF-A-NEW-SESSION'

/**
 * Hostile requests carrying `token` (or none, or a forged one); a logout carries a fresh token
 * instead, so that a logout that succeeds does not end the session the other requests use, and
 * every logout has a session to end.
 */
function requestArbitrary(token: string): fc.Arbitrary<RawRequest> {
  return fc
    .record({
      route: fc.oneof(
        // A method and a path that go together, so that bodies reach the service …
        { weight: 4, arbitrary: fc.constantFrom(...ROUTES) },
        // … hostile query strings on the list and the history …
        {
          weight: 2,
          arbitrary: fc
            .tuple(fc.constantFrom('/v3/beneficiaries', '/v3/beneficiaries/2/history'), visible)
            .map(([path, query]) => ['GET', `${path}?${query}`] as const),
        },
        // … and any method on any target.
        {
          weight: 3,
          arbitrary: fc.tuple(
            fc.oneof(
              { weight: 6, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'HEAD') },
              {
                weight: 1,
                arbitrary: fc.constantFrom('PATCH', 'OPTIONS', 'get', 'TRACE', 'PROPFIND'),
              },
              { weight: 1, arbitrary: fc.stringMatching(/^[A-Z]{1,12}$/) },
            ),
            fc.oneof(
              { weight: 6, arbitrary: fc.constantFrom(...KNOWN_PATHS) },
              { weight: 2, arbitrary: visible.map((text) => `/v3/beneficiaries/${text}`) },
              { weight: 1, arbitrary: visible.map((text) => `/${text}`) },
              { weight: 1, arbitrary: anyByte.map((text) => `/v3/beneficiaries?search=${text}`) },
              {
                weight: 1,
                arbitrary: fc.constant(`/v3/beneficiaries?search=${'a'.repeat(6_000)}`),
              },
            ),
          ),
        },
      ),
      auth: fc.constantFrom('valid', 'valid', 'none', 'garbage'),
      requestId: fc.oneof(fc.constant(undefined), fc.constant(undefined), visible, latin1),
      headers: fc.array(
        fc.tuple(
          headerName,
          fc.oneof({ weight: 8, arbitrary: visible }, { weight: 1, arbitrary: anyByte }),
        ),
        { maxLength: 5 },
      ),
      body: fc.oneof(
        { weight: 1, arbitrary: fc.constant('') },
        {
          weight: 2,
          arbitrary: fc.constantFrom(
            'NaN',
            '{"a":',
            '[1,2',
            "{'a':1}",
            'null',
            '[]',
            '"x"',
            '{"first_name":"\\ud800"}',
            '{"__proto__":{"admin":true}}',
            `${'['.repeat(40)}${']'.repeat(40)}`,
          ),
        },
        { weight: 1, arbitrary: fc.constant(JSON.stringify(MARIO)) },
        { weight: 1, arbitrary: fc.json({ maxDepth: 3 }) },
        {
          weight: 2,
          arbitrary: fc
            .array(
              fc.tuple(
                fc.constantFrom(
                  'first_name',
                  'email',
                  'status',
                  'client_id',
                  'refresh_token',
                  '__proto__',
                  'metadata',
                ),
                fc.jsonValue({ maxDepth: 2 }),
              ),
              { maxLength: 5 },
            )
            .map(
              (entries) => `{${entries.map(([k, v]) => `"${k}":${JSON.stringify(v)}`).join(',')}}`,
            ),
        },
        {
          weight: 2,
          arbitrary: fc
            .uint8Array({ maxLength: 200 })
            .map((bytes) => Buffer.from(bytes).toString('latin1')),
        },
      ),
      chunked: fc.boolean(),
      injection: fc.oneof(
        { weight: 12, arbitrary: fc.constant('') },
        { weight: 1, arbitrary: fc.constantFrom('\u0000', '\r\nX-Injected: 1', '\n', '\u0001') },
      ),
    })
    .map((r) => {
      const [method, target] = r.route
      const body = Buffer.from(r.body, 'latin1')
      const lines = [`${method} ${target} HTTP/1.1`, 'Host: 127.0.0.1']
      if (r.requestId !== undefined) lines.push(`X-Request-Id: ${r.requestId}`)
      if (r.auth === 'valid') {
        lines.push(`Authorization: Bearer ${target === '/v3/auth/logout' ? FRESH_TOKEN : token}`)
      }
      if (r.auth === 'garbage') lines.push('Authorization: Bearer eyJhbGciOiJub25lIn0.e30.')
      if (body.length > 0) lines.push('Content-Type: application/json')
      for (const [name, value] of r.headers) {
        // Framing stays the test's: each request must end where the test says it does.
        if (/^(content-length|transfer-encoding|connection|host)$/i.test(name)) continue
        lines.push(`${name}: ${value}`)
      }
      if (r.injection !== '') lines.push(`X-Hostile: a${r.injection}b`)
      lines.push('Connection: close')
      let payload = body
      if (r.chunked && body.length > 0) {
        lines.push('Transfer-Encoding: chunked')
        payload = Buffer.concat([
          Buffer.from(`${body.length.toString(16)}\r\n`, 'latin1'),
          body,
          Buffer.from('\r\n0\r\n\r\n', 'latin1'),
        ])
      } else if (body.length > 0 || method === 'POST' || method === 'PUT') {
        lines.push(`Content-Length: ${body.length}`)
      }
      const head = `${lines.join('\r\n')}\r\n\r\n`
      return {
        bytes: Buffer.concat([Buffer.from(head, 'latin1'), payload]),
        method,
        kind:
          !isClean(lines.join('')) ||
          r.injection !== '' ||
          !target.startsWith('/') ||
          /[ \t]/.test(target)
            ? ('malformed' as const)
            : STANDARD_METHODS.includes(method)
              ? ('standard' as const)
              : ('odd' as const),
        label: JSON.stringify(head.replace(token, '<token>').slice(0, 300)),
      }
    })
}

/** An HTTP response read off the socket, or nothing if the server closed without one. */
interface WireAnswer {
  readonly raw: string
  readonly status: number | undefined
  readonly headers: Record<string, string>
  readonly body: string
}

function parseAnswer(raw: string, method: string): WireAnswer | 'incomplete' {
  const end = raw.indexOf('\r\n\r\n')
  if (end === -1) return 'incomplete'
  const [statusLine, ...headerLines] = raw.slice(0, end).split('\r\n')
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1]
  const headers: Record<string, string> = {}
  for (const line of headerLines) {
    const colon = line.indexOf(':')
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  const body = raw.slice(end + 4)
  const length = Number(headers['content-length'] ?? 0)
  const bodyless = method === 'HEAD' || status === '204' || status === '304'
  if (!bodyless && Buffer.byteLength(body, 'latin1') < length) return 'incomplete'
  return { raw, status: status === undefined ? undefined : Number(status), headers, body }
}

/**
 * How long a malformed request may go unanswered before the test stops waiting: uWebSockets.js
 * neither answers nor closes a connection whose request line or headers hold a control
 * character or a bare LF, or whose request target holds a space or a tab (a request line of more
 * than three parts; its idle timeout closes it some 10 s later), where node:http answers 400 at
 * once. Either is a clean refusal; a well-formed request must be answered within 5 s.
 */
const MALFORMED_PATIENCE_MS = 400

/**
 * Sends `bytes` on a new connection; resolves with the first response, or `undefined` when the
 * server closed without one or, if `mustAnswer` is false, stayed silent for a while.
 */
function exchange(
  port: number,
  bytes: Buffer,
  method: string,
  mustAnswer = true,
): Promise<WireAnswer | undefined> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let received = ''
    let settled = false
    const finish = (answer: WireAnswer | undefined): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      resolve(answer)
    }
    const timer = setTimeout(
      () => {
        if (!mustAnswer && received === '') return finish(undefined)
        settled = true
        socket.destroy()
        reject(
          new Error(`neither an answer nor a close; got ${JSON.stringify(received.slice(0, 100))}`),
        )
      },
      mustAnswer ? 5_000 : MALFORMED_PATIENCE_MS,
    )
    socket.setEncoding('latin1')
    socket.on('connect', () => socket.write(bytes))
    socket.on('data', (chunk: string) => {
      received += chunk
      const answer = parseAnswer(received, method)
      if (answer !== 'incomplete') finish(answer)
    })
    const closed = (): void => {
      const answer = received === '' ? undefined : parseAnswer(received, method)
      finish(
        answer === 'incomplete'
          ? { raw: received, status: undefined, headers: {}, body: '' }
          : answer,
      )
    }
    socket.on('close', closed)
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // A server may reset a connection it refused; what it answered first still counts.
      if (error.code === 'ECONNRESET' || error.code === 'EPIPE') closed()
      else if (!settled) {
        settled = true
        clearTimeout(timer)
        reject(error)
      }
    })
  })
}

function checkAnswer(answer: WireAnswer | undefined, request: RawRequest, context: string): void {
  if (answer === undefined) {
    // A connection closed without a word is a clean refusal, but not for a standard request.
    assert.notEqual(request.kind, 'standard', `${context}: a well-formed request got no answer`)
    return
  }
  assert.ok(
    answer.status !== undefined,
    `${context}: not an HTTP response: ${answer.raw.slice(0, 120)}`,
  )
  assert.ok(answer.status < 500, `${context}: ${answer.raw.slice(0, 300)}`)
  // D24: the request id sent back is the client's only when sane, so never a hostile byte.
  if (answer.headers['x-request-id'] !== undefined) {
    assert.match(answer.headers['x-request-id'], /^[A-Za-z0-9:._-]{1,128}$/, context)
  }
  const json = answer.headers['content-type']?.startsWith('application/json') === true
  if (answer.status >= 400 && json && request.method !== 'HEAD') {
    assertErrorBody(
      answer.status,
      answer.headers,
      Buffer.from(answer.body, 'latin1').toString('utf8'),
      context,
    )
  } else if (!json) {
    assertNoLeak(answer.body, context)
  }
}

/** One request of a pipelined batch, and whether it may change storage. */
interface PipedRequest {
  readonly text: string
  readonly id: string
  readonly method: string
  readonly write: boolean
}

let serial = 0

/** A request of one of the shapes a client pipelines, writes among them, with its own id. */
function pipedArbitrary(token: string): fc.Arbitrary<PipedRequest> {
  return fc
    .oneof(
      fc.constant(['GET', '/healthz', undefined] as const),
      fc.constant(['GET', '/v3/beneficiaries?per_page=2', undefined] as const),
      fc.constant(['GET', '/v3/beneficiaries/1', undefined] as const),
      fc.constant(['HEAD', '/v3/beneficiaries/1', undefined] as const),
      fc.constant(['POST', '/v3/beneficiaries', 'create'] as const),
      fc.constant(['POST', '/v3/beneficiaries', '{"first_name":'] as const),
      fc
        .integer({ min: 100_000, max: 999_999 })
        .map(
          (n) => ['PUT', '/v3/beneficiaries/2', JSON.stringify({ phone: `+39333${n}` })] as const,
        ),
      fc
        .constantFrom('active', 'inactive')
        .map(
          (status) => ['POST', '/v3/beneficiaries/2/status', JSON.stringify({ status })] as const,
        ),
      fc.constant(['DELETE', '/v3/beneficiaries/987654', undefined] as const),
    )
    .map(([method, target, content]) => {
      const id = `pipe-${++serial}`
      const body =
        content === 'create'
          ? JSON.stringify({ first_name: 'Pia', last_name: 'Pipe', email: `${id}@example.org` })
          : content
      const lines = [
        `${method} ${target} HTTP/1.1`,
        'Host: 127.0.0.1',
        `Authorization: Bearer ${token}`,
        `X-Request-Id: ${id}`,
      ]
      if (body !== undefined) {
        lines.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`)
      }
      return {
        text: `${lines.join('\r\n')}\r\n\r\n${body ?? ''}`,
        id,
        method,
        write: method !== 'GET' && method !== 'HEAD',
      }
    })
}

/**
 * Writes `pieces` on one connection (each after its pause) and reads until the server closes
 * it, or `patienceMs` passes; resolves with every byte received and whether it was closed.
 */
function converse(
  port: number,
  pieces: readonly { readonly afterMs: number; readonly bytes: Buffer }[],
  patienceMs = 5_000,
): Promise<{ received: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    let received = ''
    let done = false
    const finish = (closed: boolean): void => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      resolve({ received, closed })
    }
    const timer = setTimeout(() => finish(false), patienceMs)
    socket.setEncoding('latin1')
    socket.on('connect', () => {
      void (async () => {
        for (const piece of pieces) {
          if (piece.afterMs > 0) await new Promise((r) => setTimeout(r, piece.afterMs))
          if (done || socket.destroyed) return
          socket.write(piece.bytes)
        }
      })()
    })
    socket.on('data', (chunk: string) => (received += chunk))
    socket.on('close', () => finish(true))
    socket.on('error', () => finish(true))
  })
}

/** The answers in `raw`, in order, for requests of `methods` (a HEAD answer has no body). */
function answersIn(raw: string, methods: readonly string[]): WireAnswer[] {
  const answers: WireAnswer[] = []
  let rest = raw
  for (const method of methods) {
    const answer = parseAnswer(rest, method)
    if (answer === 'incomplete' || answer.status === undefined) break
    const end = rest.indexOf('\r\n\r\n') + 4
    const bodyless = method === 'HEAD' || answer.status === 204 || answer.status === 304
    const length = bodyless ? 0 : Number(answer.headers['content-length'] ?? 0)
    answers.push({
      ...answer,
      raw: rest.slice(0, end + length),
      body: rest.slice(end, end + length),
    })
    rest = rest.slice(end + length)
  }
  return answers
}

/** How many history entries the request with this id left (D27): one per change it made. */
function changesBy(world: SqliteWorld, requestId: string): number {
  return world.storage.database
    .prepare<[string], number>('SELECT count(*) FROM beneficiary_history WHERE request_id = ?')
    .pluck()
    .get(requestId)!
}

for (const transport of TRANSPORTS) {
  const title = `hostile bytes on the wire, ${transport} transport (a real server on 127.0.0.1)`
  describe(title, { skip: skipOn(transport) }, () => {
    let world: SqliteWorld
    let server: RunningServer
    let token: string

    before(async () => {
      world = await openSqliteWorld(`wire-${transport}`)
      token = (await accessToken(world.service, world.writer)).access
      await world.service.create({ token }, MARIO)
      await world.service.create(
        { token },
        { first_name: 'Anna', last_name: 'Neri', email: 'a@b.it' },
      )
      server = await startServer({
        service: world.service,
        transport,
        host: '127.0.0.1',
        port: 0,
        requestTimeoutMs: 1_000,
        headersTimeoutMs: 1_000,
      })
    })

    after(async () => {
      await server?.close(1_000)
      await world?.close()
    })

    async function probesAnswer(context: string): Promise<void> {
      for (const [path, body] of [
        ['/healthz', '{"status":"ok"}'],
        ['/readyz', '{"status":"ready"}'],
      ] as const) {
        const answer = await exchange(
          server.port,
          Buffer.from(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`),
          'GET',
        )
        assert.equal(answer?.status, 200, `${context}: ${path} after the batch`)
        assert.equal(answer?.body, body, `${context}: ${path}`)
      }
    }

    it('D12, D24: batches of raw hostile requests get clean answers below 500, change nothing when refused, and the server keeps answering', async () => {
      let answered = 0
      await fc.assert(
        fc.asyncProperty(
          fc.array(requestArbitrary(token), { minLength: 1, maxLength: 4 }),
          async (batch) => {
            for (const request of batch) {
              let bytes = request.bytes
              if (bytes.includes(FRESH_TOKEN)) {
                const fresh = (await accessToken(world.service, world.writer)).access
                bytes = Buffer.from(bytes.toString('latin1').replace(FRESH_TOKEN, fresh), 'latin1')
              }
              const digest = storageDigest(world.storage.database)
              const answer = await exchange(
                server.port,
                bytes,
                request.method,
                request.kind !== 'malformed',
              )
              const context = `${transport} ${request.label}`
              checkAnswer(answer, request, context)
              if (answer?.status !== undefined) answered++
              if (answer?.status === undefined || answer.status >= 300) {
                assert.equal(
                  storageDigest(world.storage.database),
                  digest,
                  `${context}: storage changed`,
                )
              }
            }
            await probesAnswer(`${transport} after ${batch.length} requests`)
          },
        ),
        settings(25),
      )
      assert.ok(answered > 0, 'no request was answered: the property proved nothing')
    })

    it('pipelined requests, writes among them, are answered in order, or (uws) refused by a close that leaves every unanswered write undone', async () => {
      let complete = 0
      let unanswered = 0
      await fc.assert(
        fc.asyncProperty(
          fc.array(pipedArbitrary(token), { minLength: 2, maxLength: 4 }),
          // One write, or two: cut anywhere, or where a request ends, the rest after a pause.
          fc.oneof(
            fc.constant(undefined),
            fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 0, max: 40 })),
            fc.tuple(fc.constant('boundary' as const), fc.integer({ min: 10, max: 40 })),
          ),
          async (batch, split) => {
            const last = batch.length - 1
            const bytes = Buffer.from(
              batch
                .map((request, i) =>
                  i === last
                    ? request.text.replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n')
                    : request.text,
                )
                .join(''),
              'latin1',
            )
            const at =
              split === undefined
                ? bytes.length
                : split[0] === 'boundary'
                  ? Buffer.byteLength(batch[0]!.text, 'latin1')
                  : Math.floor(split[0] * bytes.length)
            const pieces = [
              { afterMs: 0, bytes: bytes.subarray(0, at) },
              { afterMs: split?.[1] ?? 0, bytes: bytes.subarray(at) },
            ]
            const { received, closed } = await converse(server.port, pieces)
            const context = `${transport} ${batch.map((r) => `${r.method} ${r.id}`).join(', ')} split ${JSON.stringify(split)}`
            assert.ok(closed, `${context}: neither answered in full nor closed`)
            const answers = answersIn(
              received,
              batch.map((r) => r.method),
            )
            answers.forEach((answer, i) => {
              assert.ok(answer.status! < 500, `${context}: ${answer.raw.slice(0, 200)}`)
              assert.equal(answer.headers['x-request-id'], batch[i]!.id, `${context}: order`)
            })
            if (transport === 'node') assert.equal(answers.length, batch.length, context)
            if (answers.length === batch.length) complete++
            // No write is carried out without its answer.
            batch.forEach((request, i) => {
              if (request.write && i >= answers.length) {
                unanswered++
                assert.equal(
                  changesBy(world, request.id),
                  0,
                  `${context}: ${request.id} done, unanswered`,
                )
              }
              if (request.method === 'POST' && answers[i]?.status === 201) {
                assert.equal(
                  changesBy(world, request.id),
                  1,
                  `${context}: ${request.id} answered 201`,
                )
              }
            })
          },
        ),
        settings(25),
      )
      // node:http answers every batch; this uWS build closes a connection at a pipelined
      // request, so there the property is about the writes it left unanswered, and undone.
      if (transport === 'node') assert.ok(complete > 0, 'no batch was answered in full')
      else assert.ok(unanswered > 0, 'no write went unanswered: the property proved little')
    })

    it('header counts and sizes: served within the limits, 431 in the standard body beyond them, or (uws) the limits of its build', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: 60 }),
          fc.integer({ min: 1, max: 120 }),
          fc.oneof(
            { weight: 3, arbitrary: fc.constant(0) },
            { weight: 2, arbitrary: fc.integer({ min: 1, max: 6 * 1024 }) },
            { weight: 1, arbitrary: fc.integer({ min: 6 * 1024, max: 80 * 1024 }) },
          ),
          fc.boolean(),
          async (fillers, size, big, split) => {
            const target = '/v3/beneficiaries?per_page=1'
            const fields: [string, string][] = [
              ['Host', '127.0.0.1'],
              ['Authorization', `Bearer ${token}`],
            ]
            for (let i = 0; i < fillers; i++) fields.push([`X-Filler-${i}`, 'f'.repeat(size)])
            if (big > 0) fields.push(['X-Big', 'b'.repeat(big)])
            fields.push(['Connection', 'close'])
            const head = `GET ${target} HTTP/1.1\r\n${fields.map(([n, v]) => `${n}: ${v}\r\n`).join('')}\r\n`
            // What node:http counts against its limit, and the transports share: target, names, values.
            const counted = fields.reduce((sum, [n, v]) => sum + n.length + v.length, target.length)
            const bytes = Buffer.from(head, 'latin1')
            const at = split ? 20 : bytes.length
            const tooMany = fields.length > MAX_HEADER_FIELDS
            const tooLarge = counted > MAX_HEADER_BYTES
            const { received } = await converse(
              server.port,
              [
                { afterMs: 0, bytes: bytes.subarray(0, at) },
                { afterMs: split ? 20 : 0, bytes: bytes.subarray(at) },
              ],
              transport === 'uws' && tooMany ? MALFORMED_PATIENCE_MS : 5_000,
            )
            const context = `${transport} ${fields.length} fields, ${counted} bytes counted, ${bytes.length} sent${split ? ' in two reads' : ''}`
            const answer = answersIn(received, ['GET'])[0]
            if (
              transport === 'uws' &&
              (tooMany || (split && bytes.length > 4096) || bytes.length > 100 * 1024)
            ) {
              // Measured limits of the uWS build (docs/security.md): more than 48 fields are
              // never handed over (its idle timeout closes the connection); a head over 4 KiB
              // split over reads is closed, and one too large for a read reset, without an answer.
              assert.equal(answer, undefined, `${context}: ${received.slice(0, 80)}`)
              return
            }
            assert.ok(answer !== undefined, `${context}: no answer`)
            if (tooMany || tooLarge) {
              assert.equal(answer.status, 431, context)
              assertErrorBody(431, answer.headers, answer.body, context)
              assert.equal(JSON.parse(answer.body).error, 'request_header_fields_too_large')
            } else {
              assert.equal(answer.status, 200, context)
            }
          },
        ),
        settings(20),
      )
      await probesAnswer(`${transport} after the header property`)
    })

    it('conflicting framing headers are 400 and change nothing; one sound framing header is served', async () => {
      const codings = [
        'chunked',
        'Chunked',
        ' chunked',
        'chunked, identity',
        'identity',
        'gzip',
        'gzip, chunked',
        'chunked, chunked',
      ]
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.constantFrom('right', 'other', 'signed'), { maxLength: 2 }),
          fc.array(fc.constantFrom(...codings), { maxLength: 2 }),
          async (lengths, encodings) => {
            fc.pre(lengths.length + encodings.length > 0)
            // A single wrong length is a body still arriving (408), not conflicting framing.
            fc.pre(!(encodings.length === 0 && lengths.length === 1 && lengths[0] === 'other'))
            const id = `framing-${++serial}`
            const json = JSON.stringify({
              first_name: 'Fra',
              last_name: 'Ming',
              email: `${id}@example.org`,
            })
            const body =
              encodings.length > 0 ? `${json.length.toString(16)}\r\n${json}\r\n0\r\n\r\n` : json
            const lines = [
              'POST /v3/beneficiaries HTTP/1.1',
              'Host: 127.0.0.1',
              `Authorization: Bearer ${token}`,
              `X-Request-Id: ${id}`,
              'Content-Type: application/json',
              'Connection: close',
              ...lengths.map(
                (kind) =>
                  `Content-Length: ${kind === 'right' ? json.length : kind === 'other' ? json.length + 3 : `+${json.length}`}`,
              ),
              ...encodings.map((coding) => `Transfer-Encoding: ${coding}`),
            ]
            const digest = storageDigest(world.storage.database)
            const { received } = await converse(server.port, [
              { afterMs: 0, bytes: Buffer.from(`${lines.join('\r\n')}\r\n\r\n${body}`, 'latin1') },
            ])
            const context = `${transport} lengths ${JSON.stringify(lengths)} codings ${JSON.stringify(encodings)}`
            const answer = answersIn(received, ['POST'])[0]
            const sound =
              (lengths.length === 1 && lengths[0] === 'right' && encodings.length === 0) ||
              (lengths.length === 0 &&
                encodings.length === 1 &&
                encodings[0]!.trim().toLowerCase() === 'chunked')
            if (sound) {
              assert.equal(answer?.status, 201, `${context}: ${received.slice(0, 120)}`)
              assert.equal(changesBy(world, id), 1, context)
              return
            }
            assert.equal(
              storageDigest(world.storage.database),
              digest,
              `${context}: storage changed`,
            )
            // The uWS build closes these itself, before the transport can answer.
            const silent =
              transport === 'uws' &&
              ((lengths.length > 0 && encodings.length > 0) || lengths.includes('signed'))
            if (answer === undefined && silent) return
            assert.equal(answer?.status, 400, `${context}: ${received.slice(0, 120)}`)
            assertErrorBody(400, answer.headers, answer.body, context)
          },
        ),
        settings(30),
      )
      await probesAnswer(`${transport} after the framing property`)
    })
  })
}
