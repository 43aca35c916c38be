import assert from 'node:assert/strict'
import Database from 'better-sqlite3'
import type { CliIo } from '../../server/cli/cli-io.js'
import { runCli } from '../../server/cli/run-cli.js'
import { OpenApiResponseValidator } from '../server/openapi-validator.js'

export { Random } from '../support/random.js'

/** Whether the long form runs (`npm run test:long` sets `TEST_LONG=1`). */
export const LONG = process.env['TEST_LONG'] === '1'

/** An HTTP answer: status, lower-cased headers, and the body parsed when it is JSON. */
export interface Reply {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
  readonly json: Record<string, unknown> | undefined
}

/** What a request carries besides its method and path. */
export interface Send {
  readonly token?: string
  readonly body?: unknown
  readonly headers?: Record<string, string>
  /** Abort after this long; default 20 s, so that no request of a test can hang it. */
  readonly timeoutMs?: number
}

/** Sends one request with fetch; rejects when the connection fails (as it does after a kill). */
export async function call(
  base: string,
  method: string,
  path: string,
  send: Send = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...send.headers }
  if (send.token !== undefined) headers['authorization'] = `Bearer ${send.token}`
  if (send.body !== undefined) headers['content-type'] = 'application/json'
  const response = await fetch(base + path, {
    method,
    headers,
    signal: AbortSignal.timeout(send.timeoutMs ?? 20_000),
    ...(send.body !== undefined && { body: JSON.stringify(send.body) }),
  })
  const body = await response.text()
  const json = response.headers.get('content-type')?.startsWith('application/json')
    ? (JSON.parse(body) as Record<string, unknown>)
    : undefined
  return { status: response.status, headers: Object.fromEntries(response.headers), body, json }
}

/** The version in a strong ETag `"v7"`. */
export function versionOf(reply: Reply): number {
  const match = /^"v(\d+)"$/.exec(reply.headers['etag'] ?? '')
  assert.ok(match, `no version ETag on a ${reply.status}: ${reply.headers['etag']}`)
  return Number(match[1])
}

const validator = new OpenApiResponseValidator()

/**
 * Asserts that `reply` is the standard error body (specification 7.1) with this status and
 * identifier, carrying its request id, and that it matches what the OpenAPI document says of
 * that status on that operation (headers included).
 */
export function assertStandardError(
  reply: Reply,
  method: string,
  path: string,
  status: number,
  error: string,
): void {
  assert.equal(reply.status, status, reply.body)
  const json = reply.json
  assert.ok(json !== undefined, `not JSON: ${reply.body}`)
  assert.equal(json['error'], error)
  assert.equal(json['code'], status)
  assert.equal(typeof json['message'], 'string')
  assert.equal(json['request_id'], reply.headers['x-request-id'])
  for (const key of Object.keys(json)) {
    assert.ok(['error', 'message', 'code', 'details', 'request_id'].includes(key), key)
  }
  // No SQL, driver code or file path reaches the client.
  assert.doesNotMatch(reply.body, /SQLITE|sqlite|INSERT|UPDATE|COMMIT|\/tmp\//)
  const bare = path.split('?')[0]!
  assert.deepEqual(
    validator.check(method, bare, { status, headers: reply.headers, body: reply.body }),
    [],
  )
}

/** Asserts a 503 `service_unavailable` with a small whole `Retry-After`. */
export function assertUnavailable(reply: Reply, method: string, path: string): void {
  assertStandardError(reply, method, path, 503, 'service_unavailable')
  const retryAfter = Number(reply.headers['retry-after'])
  assert.ok(
    Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60,
    `Retry-After ${reply.headers['retry-after']}`,
  )
}

/** A provisioned API client. */
export interface Client {
  readonly client_id: string
  readonly client_secret: string
}

/** The CLI's flag for a database: `--database-url` for a PostgreSQL URL, `--db` for a file. */
export function databaseArgs(db: string): string[] {
  return /^postgres(ql)?:\/\//.test(db) ? ['--database-url', db] : ['--db', db]
}

/**
 * Provisions a read-write client in `db` (a SQLite file or a PostgreSQL URL) with the CLI, in
 * this process (it opens and closes the database).
 */
export async function createClient(db: string): Promise<Client> {
  const out: string[] = []
  const err: string[] = []
  const io: CliIo = {
    env: {},
    out: (text) => void out.push(text),
    err: (text) => void err.push(text),
    signals: { once: () => undefined },
  }
  const status = await runCli(['clients', 'create', ...databaseArgs(db), '--name', 'faults'], io)
  assert.equal(status, 0, err.join('\n'))
  return JSON.parse(out.join('')) as Client
}

/** Logs `client` in and returns its access token. */
export async function login(base: string, client: Client): Promise<string> {
  const reply = await call(base, 'POST', '/v3/auth/login', { body: client })
  assert.equal(reply.status, 200, reply.body)
  return String(reply.json!['access_token'])
}

/** Opens `path` read-only with better-sqlite3, runs `work`, and closes it again. */
export function readOnly<T>(path: string, work: (db: Database.Database) => T): T {
  const db = new Database(path, { readonly: true, fileMustExist: true })
  try {
    return work(db)
  } finally {
    db.close()
  }
}

/** `PRAGMA integrity_check` and `PRAGMA foreign_key_check` of the file, opened read-only. */
export function checkIntegrity(path: string): { integrity: string; foreignKeys: unknown[] } {
  return readOnly(path, (db) => ({
    integrity: String(db.pragma('integrity_check', { simple: true })),
    foreignKeys: db.pragma('foreign_key_check') as unknown[],
  }))
}

/**
 * Every row of every table of the database (FTS5 shadow tables, counters, history and
 * idempotency claims included), each table's rows sorted: two equal snapshots mean that
 * nothing at all was written in between.
 */
export function snapshot(path: string): Record<string, string[]> {
  return readOnly(path, (db) => {
    const tables = db
      .prepare<[], { name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
      )
      .all()
    return Object.fromEntries(
      tables.map(({ name }) => [
        name,
        db
          .prepare(`SELECT * FROM "${name}"`)
          .all()
          .map((row) =>
            JSON.stringify(row, (_key, value: unknown) =>
              Buffer.isBuffer(value) ? value.toString('hex') : value,
            ),
          )
          .sort(),
      ]),
    )
  })
}

/** `n` as six lower-case letters: unique names that are never a prefix of one another. */
export function letters(n: number): string {
  let text = ''
  for (let i = 0; i < 6; i++) {
    text = String.fromCharCode(97 + (n % 26)) + text
    n = Math.floor(n / 26)
  }
  return text
}
