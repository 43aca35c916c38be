import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import fc from 'fast-check'
import type { ApiResponse } from '../../server/api-response.js'
import { bodyText as answerText } from '../server/body-text.js'
import { MARIO } from '../server/server-fixtures.js'
import {
  accessToken,
  assertErrorBody,
  EXPECTED_STATUSES,
  namedFields,
  settings,
} from './hostile-fixtures.js'
import { hostileStorages, type HostileWorld } from './hostile-world.js'

// Arbitrary JSON, bytes, query strings, path ids and header values sent to every route through
// the transport-neutral handler, on the production storages (SQLite on disk, and PostgreSQL). Whatever arrives:
// no 5xx, the standard error body on every refusal, and no change to storage unless the
// request succeeded.

/** Every name a body of this API uses, the reserved ones, and near misses. */
const KEYS = [
  'first_name',
  'last_name',
  'email',
  'phone',
  'date_of_birth',
  'fiscal_code',
  'address',
  'metadata',
  'status',
  'reason',
  'client_id',
  'client_secret',
  'refresh_token',
  'scope',
  'id',
  'created_at',
  'updated_at',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  '',
  'address.street',
  ' first_name',
  'FIRST_NAME',
]

/** Strings with the characters that break parsers: controls, lone surrogates, quotes, NUL. */
const nastyString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '\ud800',
    '\udfff',
    '\u2028\u2029',
    '"',
    '\\',
    '{}',
    '__proto__',
    'x'.repeat(2_000),
    'active',
    'pending',
    'inactive',
    'read write admin',
    '1985-12-10',
    'RSSMRA85T10A562S',
    'Mario',
    'mario@example.org',
    '+39 333 123 4567',
  ),
)

/** A JSON value, built so that it may also carry `__proto__` keys, duplicates and deep nesting. */
type RawJson = { readonly text: string }

function rawOf(value: unknown): RawJson {
  return { text: JSON.stringify(value) ?? 'null' }
}

const rawValue: fc.Arbitrary<RawJson> = fc.letrec<{ value: RawJson }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.jsonValue({ maxDepth: 2 }).map(rawOf),
    nastyString.map(rawOf),
    fc.constantFrom(0, -0, 1e308, -1e-308, 2 ** 53 + 1, 1.5, true, false, null).map(rawOf),
    fc.constantFrom('1e999', '-1e999', '123456789012345678901234567890').map((text) => ({ text })),
    fc.array(fc.tuple(fc.constantFrom(...KEYS), tie('value')), { maxLength: 4 }).map((entries) => ({
      text: `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${value.text}`).join(',')}}`,
    })),
    fc
      .array(tie('value'), { maxLength: 3 })
      .map((items) => ({ text: `[${items.map((item) => item.text).join(',')}]` })),
  ),
})).value

/** A top-level body as JSON text: objects with the API's keys above all, then anything. */
const bodyText: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .array(fc.tuple(fc.constantFrom(...KEYS), rawValue), { maxLength: 8 })
      .map(
        (entries) =>
          `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${value.text}`).join(',')}}`,
      ),
  },
  { weight: 2, arbitrary: rawValue.map((value) => value.text) },
  { weight: 1, arbitrary: fc.json() },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 28, max: 40 }), fc.constantFrom('[', '{"a":'))
      .map(([depth, open]) => open.repeat(depth) + '1' + (open === '[' ? ']' : '}').repeat(depth)),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      'null',
      'NaN',
      '{"a":1,}',
      '[1,2',
      '\ufeff{}',
      '{"first_name":"a"}garbage',
      "{'first_name':'a'}",
      '{"__proto__":{"polluted":true}}',
      '{"constructor":{"prototype":{"polluted":true}}}',
      '{"status":"active","status":"pending"}',
      '"\\ud800"',
      '{"a":"\\u0000"}',
    ),
  },
)

/**
 * Whether JSON text parses and is nested at most 32 deep, by the test's own reading. A leading
 * byte order mark may be ignored (RFC 8259, section 8.1), as the server does.
 */
function parses(json: string): { ok: true; value: unknown } | { ok: false } {
  const text = json.startsWith('\ufeff') ? json.slice(1) : json
  let depth = 0
  let max = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (inString) {
      if (c === '\\') i++
      else if (c === '"') inString = false
    } else if (c === '"') inString = true
    else if (c === '[' || c === '{') max = Math.max(max, ++depth)
    else if (c === ']' || c === '}') depth--
  }
  if (max > 32) return { ok: false }
  try {
    return { ok: true, value: JSON.parse(text) as unknown }
  } catch {
    return { ok: false }
  }
}

interface Route {
  readonly name: string
  readonly method: string
  readonly path: (seeds: Seeds) => string
  readonly token: 'none' | 'writer' | 'fresh'
  /** Whether it reads a body (D12: 400 for one that is not a JSON object). */
  readonly takesBody: boolean
}

/** The records the properties aim at, created before they run. */
interface Seeds {
  readonly ids: readonly number[]
}

const BODY_ROUTES: readonly Route[] = [
  { name: 'login', method: 'POST', path: () => '/v3/auth/login', token: 'none', takesBody: true },
  {
    name: 'refresh',
    method: 'POST',
    path: () => '/v3/auth/refresh',
    token: 'none',
    takesBody: true,
  },
  {
    name: 'logout',
    method: 'POST',
    path: () => '/v3/auth/logout',
    token: 'fresh',
    takesBody: true,
  },
  {
    name: 'create',
    method: 'POST',
    path: () => '/v3/beneficiaries',
    token: 'writer',
    takesBody: true,
  },
  {
    name: 'update',
    method: 'PUT',
    path: (s) => `/v3/beneficiaries/${s.ids[0]}`,
    token: 'writer',
    takesBody: true,
  },
  {
    name: 'status',
    method: 'POST',
    path: (s) => `/v3/beneficiaries/${s.ids[1]}/status`,
    token: 'writer',
    takesBody: true,
  },
  {
    name: 'list (ignores bodies)',
    method: 'GET',
    path: () => '/v3/beneficiaries',
    token: 'writer',
    takesBody: false,
  },
  {
    name: 'delete an unknown id (ignores bodies)',
    method: 'DELETE',
    path: () => '/v3/beneficiaries/987654321',
    token: 'writer',
    takesBody: false,
  },
]

/** The fields a 422 may name although the body left them out. */
const REQUIRED: Readonly<Record<string, readonly string[]>> = {
  login: ['client_id', 'client_secret'],
  // D4: client credentials on a refresh are optional, but come as a pair.
  refresh: ['refresh_token', 'client_id', 'client_secret'],
  create: ['first_name', 'last_name', 'email'],
  status: ['status'],
}

const LIST_PARAMS = ['page', 'per_page', 'status', 'created_from', 'created_to', 'search', 'sort']

for (const store of await hostileStorages()) {
  describe(
    `hostile requests through the handler on ${store.name}: no 5xx, the standard error body, nothing stored`,
    { skip: store.skip },
    () => {
      let world: HostileWorld
      let writer: string
      let reader: string
      let seeds: Seeds

      before(async () => {
        world = await store.open('requests')
        writer = (await accessToken(world.service, world.writer)).access
        reader = (await accessToken(world.service, world.reader)).access
        const ctx = { token: writer }
        const ids: number[] = []
        for (const body of [
          MARIO,
          { first_name: 'Anna', last_name: 'Bianchi', email: 'anna@example.org' },
          {
            first_name: 'Luca',
            last_name: 'Verdi',
            email: 'luca@example.org',
            phone: '3331234567',
          },
        ]) {
          ids.push((await world.service.create(ctx, body)).value.id)
        }
        seeds = { ids }
      })

      after(async () => {
        await world?.close()
      })

      async function call(
        method: string,
        path: string,
        options: {
          token?: string | undefined
          body?: Uint8Array | undefined
          query?: string
          headers?: Record<string, string>
        } = {},
      ): Promise<ApiResponse & { readonly body: string | undefined }> {
        const headers: Record<string, string> = {}
        if (options.body !== undefined) headers['content-type'] = 'application/json'
        if (options.token !== undefined) headers['authorization'] = `Bearer ${options.token}`
        Object.assign(headers, options.headers)
        const answer = await world.handler({
          method,
          path,
          query: options.query ?? '',
          headers,
          body: options.body,
          remoteAddress: '198.51.100.7',
        })
        return { ...answer, body: answerText(answer) }
      }

      /** The invariants every answer keeps; returns the parsed error body of a refusal. */
      async function checkAnswer(
        answer: ApiResponse & { readonly body: string | undefined },
        digestBefore: string,
        context: string,
      ): Promise<ReturnType<typeof assertErrorBody> | undefined> {
        assert.ok(EXPECTED_STATUSES.has(answer.status), `${context}: status ${answer.status}`)
        assert.ok(answer.status < 500, `${context}: ${answer.status} ${answer.body}`)
        if (answer.status < 300) return undefined
        const error = assertErrorBody(answer.status, answer.headers, answer.body, context)
        assert.equal(
          await world.digest(),
          digestBefore,
          `${context}: a ${answer.status} changed the storage`,
        )
        return error
      }

      it('D8, D12: arbitrary JSON bodies on every route that takes one', async () => {
        await fc.assert(
          fc.asyncProperty(fc.constantFrom(...BODY_ROUTES), bodyText, async (route, text) => {
            const token =
              route.token === 'none'
                ? undefined
                : route.token === 'fresh'
                  ? (await accessToken(world.service, world.writer)).access
                  : writer
            const digest = await world.digest()
            const answer = await call(route.method, route.path(seeds), {
              token,
              body: new TextEncoder().encode(text),
            })
            const context = `${route.name} ${JSON.stringify(text.slice(0, 200))}`
            const error = await checkAnswer(answer, digest, context)
            const parsed = parses(text)
            if (route.takesBody && text.length > 0) {
              const isObject =
                parsed.ok &&
                typeof parsed.value === 'object' &&
                parsed.value !== null &&
                !Array.isArray(parsed.value)
              const optional = route.name === 'logout' && parsed.ok && parsed.value === null
              // D12: a body that is not JSON, or not an object, is a 400 bad_request.
              if (!isObject && !optional) {
                assert.equal(answer.status, 400, `${context}: ${answer.body}`)
                assert.equal(error?.error, 'bad_request', context)
              }
            }
            if (error?.error === 'validation_failed') {
              // D10: every field named is one the body used (or a nested path in it), or one it
              // should have sent.
              assert.ok(parsed.ok, context)
              const keys = Object.keys(parsed.value as object)
              for (const field of namedFields(error)) {
                assert.ok(
                  (REQUIRED[route.name] ?? []).includes(field) ||
                    keys.some((key) => field === key || field.startsWith(`${key}.`)),
                  `${context}: names ${JSON.stringify(field)}`,
                )
              }
            }
          }),
          settings(300),
        )
      })

      it('D12: arbitrary bytes under arbitrary content types', async () => {
        const contentType = fc.oneof(
          fc.constantFrom(
            'application/json',
            'application/json; charset=utf-8',
            'application/json;charset=UTF-8',
            'application/json; charset=latin1',
            'application/merge-patch+json',
            'text/plain',
            'text/json',
            'application/x-www-form-urlencoded',
            'multipart/form-data; boundary=x',
            'application/xml',
            '',
            ';',
            'application/json\u0000',
          ),
          fc.string({ unit: 'binary-ascii', maxLength: 40 }),
        )
        const bytes = fc.oneof(
          fc.uint8Array({ minLength: 1, maxLength: 300 }),
          // Valid JSON with invalid UTF-8 inside: a lone continuation byte, an overlong NUL, a
          // surrogate in CESU-8.
          fc
            .constantFrom(
              [0x80],
              [0xc0, 0x80],
              [0xed, 0xa0, 0x80],
              [0xff],
              [0xf8, 0x88, 0x80, 0x80, 0x80],
            )
            .map((bad) =>
              Uint8Array.from([...new TextEncoder().encode('{"first_name":"'), ...bad, 0x22, 0x7d]),
            ),
        )
        await fc.assert(
          fc.asyncProperty(
            fc.constantFrom(...BODY_ROUTES.filter((route) => route.token !== 'fresh')),
            bytes,
            contentType,
            async (route, body, type) => {
              const token = route.token === 'none' ? undefined : writer
              const digest = await world.digest()
              const answer = await call(route.method, route.path(seeds), {
                token,
                body,
                headers: { 'content-type': type },
              })
              const context = `${route.name} ${JSON.stringify(type)} ${Buffer.from(body).toString('hex').slice(0, 120)}`
              await checkAnswer(answer, digest, context)
              const base = type.split(';')[0]!.trim().toLowerCase()
              // D12: a body of another media type is a 415, whatever the route, before any token.
              if (
                ['text/plain', 'application/x-www-form-urlencoded', 'application/xml'].includes(
                  base,
                )
              ) {
                assert.equal(answer.status, 415, context)
              }
              let utf8 = true
              try {
                new TextDecoder('utf-8', { fatal: true }).decode(body)
              } catch {
                utf8 = false
              }
              if (!utf8 && route.takesBody && answer.status !== 415) {
                assert.equal(answer.status, 400, `${context}: invalid UTF-8`)
              }
            },
          ),
          settings(200),
        )
      })

      it('D18, D12: arbitrary query strings on the list and the history', async () => {
        const name = fc.oneof(
          fc.constantFrom(...LIST_PARAMS, '__proto__', 'constructor', 'search[]', 'page%00', ''),
          fc.string({ unit: 'binary-ascii', maxLength: 8 }),
        )
        const value = fc.oneof(
          fc.string({ unit: 'binary', maxLength: 30 }),
          fc.constantFrom(
            '0',
            '1',
            '-1',
            '1e3',
            '0x10',
            ' 2',
            '100',
            '101',
            '10000001',
            '99999999999999999999',
            'active',
            'pending',
            'deleted',
            '2026-02-30',
            '2026-01-15',
            '-id',
            'id;DROP TABLE beneficiaries',
            '%',
            '%2',
            '%zz',
            '%ED%A0%80',
            '%C0%80',
            '+',
            '%00',
            'ros',
          ),
        )
        const rawQuery = fc.oneof(
          fc
            .array(fc.tuple(name, value, fc.boolean()), { maxLength: 6 })
            .map((pairs) =>
              pairs.map(([n, v, raw]) => `${n}=${raw ? v : encodeSafely(v)}`).join('&'),
            ),
          fc.string({ unit: 'binary', maxLength: 60 }),
        )
        const target = fc.constantFrom('list', 'history')
        await fc.assert(
          fc.asyncProperty(target, rawQuery, async (which, query) => {
            const path =
              which === 'list' ? '/v3/beneficiaries' : `/v3/beneficiaries/${seeds.ids[0]}/history`
            const digest = await world.digest()
            const answer = await call('GET', path, { token: reader, query })
            const context = `${which} ?${JSON.stringify(query)}`
            const error = await checkAnswer(answer, digest, context)
            assert.ok([200, 400, 422].includes(answer.status), `${context}: ${answer.status}`)
            // D12: broken percent-encoding, and only that, is a 400.
            assert.equal(answer.status === 400, !decodable(query), `${context}: ${answer.body}`)
            if (answer.status === 422) {
              const allowed = which === 'list' ? LIST_PARAMS : ['page', 'per_page']
              for (const field of namedFields(error!)) {
                assert.ok(allowed.includes(field), `${context}: names ${field}`)
              }
            }
            // Storage never changes on a read, even a successful one.
            assert.equal(await world.digest(), digest, context)
            if (answer.status === 200) {
              const links = JSON.parse(answer.body!).links as Record<string, string | null>
              for (const link of Object.values(links)) {
                if (link === null) continue
                assert.ok(link.startsWith(which === 'list' ? '/v3/beneficiaries?' : path), link)
                assert.doesNotThrow(() => decodeURIComponent(link), link)
              }
            }
          }),
          settings(300),
        )
      })

      it('D12: arbitrary path ids: a 404 unless the id is a positive integer that exists', async () => {
        const id = fc.oneof(
          fc.string({ unit: 'binary', minLength: 1, maxLength: 24 }),
          fc.stringMatching(/^[0-9]{1,25}$/),
          fc.constantFrom(
            '0',
            '-1',
            '01',
            '1.0',
            '1e3',
            ' 1',
            '1 ',
            '+1',
            '0x1',
            '１',
            '١',
            '9007199254740991',
            '9007199254740992',
            '99999999999999999',
            '1%00',
            '%31',
            '..',
            '.',
            'NaN',
            'Infinity',
            'null',
            '[1]',
            '__proto__',
            'constructor',
            '1;DROP TABLE beneficiaries',
          ),
        )
        const operation = fc.constantFrom(
          { method: 'GET', suffix: '' },
          { method: 'PUT', suffix: '' },
          { method: 'DELETE', suffix: '' },
          { method: 'POST', suffix: '/status' },
          { method: 'GET', suffix: '/history' },
          { method: 'PATCH', suffix: '' },
        )
        await fc.assert(
          fc.asyncProperty(id, operation, async (raw, { method, suffix }) => {
            const path = `/v3/beneficiaries/${raw}${suffix}`
            const body =
              method === 'PUT'
                ? new TextEncoder().encode('{}')
                : method === 'POST'
                  ? new TextEncoder().encode('{"status":"active"}')
                  : undefined
            const digest = await world.digest()
            // A stale If-Match keeps a DELETE of a real record from succeeding (D23).
            const answer = await call(method, path, {
              token: writer,
              body,
              headers: method === 'DELETE' ? { 'if-match': '"v0"' } : {},
            })
            const context = `${method} ${JSON.stringify(path)}`
            const error = await checkAnswer(answer, digest, context)
            const exists =
              /^[1-9][0-9]{0,15}$/.test(raw) &&
              Number.isSafeInteger(Number(raw)) &&
              (await world.storage.beneficiaries.get(Number(raw))) !== undefined
            if (method === 'PATCH' && !raw.includes('/')) {
              assert.equal(answer.status, 405, context)
              assert.equal(answer.headers['allow'], 'GET, HEAD, PUT, DELETE')
            } else if (!exists && !raw.includes('/')) {
              assert.equal(answer.status, 404, `${context}: ${answer.body}`)
              assert.equal(error?.error, 'not_found', context)
            } else if (exists && method === 'DELETE') {
              assert.equal(answer.status, 412, context)
            }
          }),
          settings(300),
        )
      })

      it('D22–D24: arbitrary If-Match, Idempotency-Key, Content-Type, Authorization and X-Request-Id values', async () => {
        const header = fc.oneof(
          fc.string({ unit: 'binary-ascii', maxLength: 40 }),
          fc.string({ unit: 'binary', maxLength: 20 }),
          fc.string({ unit: 'binary-ascii', minLength: 250, maxLength: 300 }),
          fc.constantFrom('', ' ', '*', '"v1"', '"v0"', 'W/"v1"', '"v1", "v2"', '"v999"', 'v1'),
        )
        const operation = fc.constantFrom('create', 'update', 'delete', 'status')
        // Each header is hostile in about half the runs and left to its sane default otherwise, so
        // that one hostile header at a time also gets its chance to be the only reason to refuse.
        const sometimes = (value: fc.Arbitrary<string>): fc.Arbitrary<string | undefined> =>
          fc.oneof(fc.constant(undefined), value)
        const which = fc.record({
          ifMatch: sometimes(header),
          idempotencyKey: sometimes(header),
          contentType: sometimes(header),
          authorization: sometimes(
            fc.oneof(
              header,
              header.map((value) => `Bearer ${value}`),
            ),
          ),
          requestId: sometimes(header),
        })
        let own = 0
        await fc.assert(
          fc.asyncProperty(operation, which, async (op, h) => {
            // A record at version 1 each run: once a run deleted or changed it, a new one.
            if ((await world.storage.beneficiaries.get(own))?.version !== 1) {
              own = (
                await world.service.create(
                  { token: writer },
                  { first_name: 'Header', last_name: 'Target', email: 'header@example.org' },
                )
              ).value.id
            }
            const current = '"v1"'
            const headers: Record<string, string> = {}
            if (h.ifMatch !== undefined) headers['if-match'] = h.ifMatch
            if (h.idempotencyKey !== undefined) headers['idempotency-key'] = h.idempotencyKey
            if (h.requestId !== undefined) headers['x-request-id'] = h.requestId
            const routes = {
              create: ['POST', '/v3/beneficiaries', JSON.stringify(MARIO_WITHOUT_CODE)],
              update: ['PUT', `/v3/beneficiaries/${own}`, '{"phone":"+390612345678"}'],
              delete: ['DELETE', `/v3/beneficiaries/${own}`, undefined],
              status: ['POST', `/v3/beneficiaries/${own}/status`, '{"status":"inactive"}'],
            } as const
            const [method, path, text] = routes[op]
            const body = text === undefined ? undefined : new TextEncoder().encode(text)
            if (body !== undefined) headers['content-type'] = h.contentType ?? 'application/json'
            headers['authorization'] = h.authorization ?? `Bearer ${writer}`
            const digest = await world.digest()
            const answer = await call(method, path, { body, headers })
            const context = `${op} ${JSON.stringify(h)}`
            const error = await checkAnswer(answer, digest, context)
            // D24: the request id echoed is the client's only when sane; never a control character.
            assert.match(answer.headers['x-request-id'] ?? '', /^[A-Za-z0-9:._-]{1,128}$/, context)
            if (error !== undefined) assert.equal(error.request_id, answer.headers['x-request-id'])
            if (answer.status >= 300) return
            // Success only with the real token (D6) …
            assert.ok(
              headers['authorization']!.includes(writer),
              `${context}: a forged token passed`,
            )
            // … an If-Match that names the current ETag or `*` (D23) …
            if (op !== 'create' && h.ifMatch !== undefined) {
              const tags = h.ifMatch.split(',').map((tag) => tag.trim())
              assert.ok(
                h.ifMatch.trim() === '*' || tags.includes(current),
                `${context}: a stale If-Match passed`,
              )
            }
            // … and an Idempotency-Key of 1–255 visible ASCII characters (D22).
            if (op === 'create' && h.idempotencyKey !== undefined) {
              assert.match(h.idempotencyKey, /^[\x21-\x7e]{1,255}$/, `${context}: a bad key passed`)
            }
          }),
          settings(200),
        )
      })

      it('D22: an Idempotency-Key replays its create without storing anything, and refuses another body', async () => {
        const key = fc.stringMatching(/^[\x21-\x7e]{1,255}$/)
        await fc.assert(
          fc.asyncProperty(
            key,
            fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }),
            async (k, name) => {
              const first = await call('POST', '/v3/beneficiaries', {
                token: writer,
                body: new TextEncoder().encode(
                  JSON.stringify({ ...MARIO_WITHOUT_CODE, first_name: `${name}x` }),
                ),
                headers: { 'idempotency-key': `${k}` },
              })
              if (first.status === 201) {
                const digest = await world.digest()
                const again = await call('POST', '/v3/beneficiaries', {
                  token: writer,
                  body: new TextEncoder().encode(
                    JSON.stringify({ ...MARIO_WITHOUT_CODE, first_name: `${name}x` }),
                  ),
                  headers: { 'idempotency-key': k },
                })
                assert.equal(again.status, 201, again.body)
                assert.equal(again.headers['idempotent-replayed'], 'true')
                assert.equal(JSON.parse(again.body!).id, JSON.parse(first.body!).id)
                const other = await call('POST', '/v3/beneficiaries', {
                  token: writer,
                  body: new TextEncoder().encode(
                    JSON.stringify({ ...MARIO_WITHOUT_CODE, first_name: `${name}y` }),
                  ),
                  headers: { 'idempotency-key': k },
                })
                const context = `key ${JSON.stringify(k)}`
                assert.equal(other.status, 422, context)
                assert.equal(
                  assertErrorBody(422, other.headers, other.body, context).error,
                  'idempotency_key_reused',
                )
                assert.equal(await world.digest(), digest, context)
              } else {
                // A key already used by an earlier run with another body.
                assert.equal(first.status, 422, first.body)
              }
            },
          ),
          settings(60),
        )
      })
    },
  )
}

/** MARIO without a fiscal code, which may be registered only once. */
const MARIO_WITHOUT_CODE: Record<string, unknown> = { ...MARIO }
delete MARIO_WITHOUT_CODE['fiscal_code']

/** Percent-encodes what `encodeURIComponent` can, and leaves a lone surrogate raw. */
function encodeSafely(value: string): string {
  try {
    return encodeURIComponent(value)
  } catch {
    return value
  }
}

/** Whether every name and value of a query string decodes, as D12 reads it (`+` is a space). */
function decodable(query: string): boolean {
  for (const part of query.split('&')) {
    if (part === '') continue
    for (const piece of part.split('=')) {
      try {
        decodeURIComponent(piece.replaceAll('+', ' '))
      } catch {
        return false
      }
    }
  }
  return true
}
