import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type BetterSqlite3 from 'better-sqlite3'
import { openSqliteStorage, type SqliteStorage } from '../../adapters/sqlite/index.js'
import {
  createBeneficiaryService,
  FakeClock,
  type BeneficiaryService,
  type ProvisionedClient,
} from '../../core/index.js'
import { createHandler, type ApiHandler } from '../../server/handler.js'
import { nodeSha256 } from '../../server/node-sha256.js'

/** `TEST_LONG=1` (npm run test:long) multiplies every property's runs. */
export const LONG = process.env['TEST_LONG'] === '1'

/** How many runs a property gets: `short` in `npm test`, ten times more in the long form. */
export function runs(short: number): number {
  return LONG ? short * 10 : short
}

/**
 * Parameters of `fc.assert`: `runs(short)` runs, and the failing assertion's own message in the
 * report (fast-check prints the seed and the shrunk counterexample with it).
 */
export function settings(short: number): { numRuns: number; includeErrorInReport: boolean } {
  return { numRuns: runs(short), includeErrorInReport: true }
}

/** The fake clock's start: a Thursday morning, UTC. Dates of birth may not be after it. */
export const T0 = Date.UTC(2026, 0, 15, 9, 0, 0)
export const TODAY = new Date(T0).toISOString().slice(0, 10)

/** Limits no property reaches, so that every answer is about the input, never a 429. */
export const NO_LIMITS = { auth: 1e9, write: 1e9, standard: 1e9 }

/** A service on a real SQLite file, its handler, a read-write and a read-only client. */
export interface SqliteWorld {
  readonly directory: string
  readonly storage: SqliteStorage
  readonly clock: FakeClock
  readonly service: BeneficiaryService
  readonly handler: ApiHandler
  readonly writer: ProvisionedClient
  readonly reader: ProvisionedClient
  /** Closes the storage and removes the temporary directory. */
  close(): Promise<void>
}

/** Opens a `SqliteWorld` in a fresh temporary directory (the production storage, on disk). */
export async function openSqliteWorld(prefix: string): Promise<SqliteWorld> {
  const directory = await mkdtemp(join(tmpdir(), `hostile-${prefix}-`))
  const storage = await openSqliteStorage({ path: join(directory, 'beneficiaries.sqlite') })
  const clock = new FakeClock(T0)
  const service = await createBeneficiaryService({
    storage,
    clock,
    limits: NO_LIMITS,
    sha256: nodeSha256,
  })
  const writer = await service.clients.create({ name: 'writer', scopes: ['read', 'write'] })
  const reader = await service.clients.create({ name: 'reader', scopes: ['read'] })
  const handler = createHandler(service)
  return {
    directory,
    storage,
    clock,
    service,
    handler,
    writer,
    reader,
    close: async () => {
      await storage.close()
      await rm(directory, { recursive: true, force: true })
    },
  }
}

/** An access token for `client`, obtained from the service directly. */
export async function accessToken(
  service: BeneficiaryService,
  client: ProvisionedClient,
): Promise<{ access: string; refresh: string }> {
  const { value } = await service.login(
    { ip: '192.0.2.1' },
    { client_id: client.client_id, client_secret: client.client_secret },
  )
  return { access: value.access_token, refresh: value.refresh_token }
}

/** The tables of the access log (D35), which reads write. */
export const ACCESS_LOG_TABLES: ReadonlySet<string> = new Set(['access_log', 'access_log_records'])

/**
 * A digest of every row of every table of the database (the FTS5 index through its shadow
 * tables; SQLite's planner statistics and the access log left out) and of the schema: equal
 * digests mean nothing was stored, changed or removed. The access log is written by every
 * successful read, in batches off the request's path (D35); its own tests check it. Read on the storage's own connection, so even a write left
 * uncommitted would show. Each row is quoted by SQLite itself, in its table's order.
 */
export function storageDigest(db: BetterSqlite3.Database): string {
  const hash = createHash('sha256')
  const schema = db
    .prepare<[], { name: string; sql: string | null }>(
      "SELECT name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_stat%' ORDER BY name",
    )
    .all()
  for (const { name, sql } of schema) {
    hash.update(`${name}\u0000${sql ?? ''}\u0001`)
    if (sql === null || !/^CREATE TABLE/i.test(sql) || ACCESS_LOG_TABLES.has(name)) continue
    for (const row of rowsOf(db, name).iterate()) hash.update(`${row}\u0002`)
    hash.update('\u0003')
  }
  return hash.digest('hex')
}

const rowStatements = new WeakMap<BetterSqlite3.Database, Map<string, BetterSqlite3.Statement>>()

function rowsOf(db: BetterSqlite3.Database, table: string): BetterSqlite3.Statement<[], string> {
  let statements = rowStatements.get(db)
  if (statements === undefined) rowStatements.set(db, (statements = new Map()))
  let statement = statements.get(table)
  if (statement === undefined) {
    const quoted = `"${table.replaceAll('"', '""')}"`
    const columns = db
      .prepare<[string], { name: string }>('SELECT name FROM pragma_table_info(?)')
      .all(table)
      .map(({ name }) => `quote("${name.replaceAll('"', '""')}")`)
    statement = db.prepare(`SELECT ${columns.join(" || ',' || ")} FROM ${quoted}`).pluck()
    statements.set(table, statement)
  }
  return statement as BetterSqlite3.Statement<[], string>
}

/** Statuses the API may answer when no limit is reachable: anything else fails a property. */
export const EXPECTED_STATUSES: ReadonlySet<number> = new Set([
  200, 201, 204, 400, 401, 403, 404, 405, 412, 413, 415, 422,
])

const ERROR_KEYS = new Set(['error', 'message', 'code', 'details', 'retry_after', 'request_id'])

/**
 * Text that would betray an internal failure in a response: a stack frame, a source location,
 * SQL or a driver's error. Applied to the messages the server wrote, never to field names that
 * merely echo the client's own keys.
 */
const LEAK =
  /\n\s+at |\bat .*\(.*:\d+:\d+\)|\.(?:js|ts):\d+|node_modules|SQLITE|\bSELECT\b|\bINSERT\b|\bUPDATE\b \w+ SET|\bsyntax error\b|TypeError|ReferenceError|RangeError|undefined is not|Cannot read prop/i

/** Fails when `text` looks like a stack trace, a source location, SQL or a driver error. */
export function assertNoLeak(text: string, context: string): void {
  assert.doesNotMatch(text, LEAK, `${context}: the response leaks internals: ${text.slice(0, 300)}`)
}

/** The parsed body of a standard error (specification 7.1, D10, D24). */
export interface ErrorBody {
  readonly error: string
  readonly message: string
  readonly code: number
  readonly details?: readonly { readonly field: string; readonly message: string }[]
  readonly retry_after?: number
  readonly request_id: string
}

/**
 * Asserts that a non-2xx answer carries exactly the specification's error body: `error`,
 * `message`, `code` equal to the status, `details` (a non-empty list of `{field, message}`) on a
 * `validation_failed` 422 and only there, `retry_after` only on a 429, the request id, nothing
 * else; JSON with the right content type; no stack trace, source location or SQL.
 */
export function assertErrorBody(
  status: number,
  headers: Readonly<Record<string, string>>,
  body: string | undefined,
  context: string,
): ErrorBody {
  assert.ok(body !== undefined && body.length > 0, `${context}: a ${status} without a body`)
  assert.equal(
    headers['content-type'],
    'application/json; charset=utf-8',
    `${context}: content type of a ${status}`,
  )
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    assert.fail(`${context}: a ${status} whose body is not JSON: ${body.slice(0, 200)}`)
  }
  assert.ok(
    typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed),
    `${context}: the error body is not an object`,
  )
  const json = parsed as Record<string, unknown>
  for (const key of Object.keys(json)) {
    assert.ok(ERROR_KEYS.has(key), `${context}: unexpected key ${key} in the error body`)
  }
  assert.equal(typeof json['error'], 'string', `${context}: error`)
  assert.match(json['error'] as string, /^[a-z_]+$/, `${context}: error identifier`)
  assert.equal(typeof json['message'], 'string', `${context}: message`)
  assert.ok((json['message'] as string).length > 0, `${context}: empty message`)
  assert.equal(json['code'], status, `${context}: code must equal the HTTP status`)
  assert.equal(typeof json['request_id'], 'string', `${context}: request_id`)
  assert.equal(json['request_id'], headers['x-request-id'], `${context}: request_id vs header`)
  assertNoLeak(json['message'] as string, context)
  if (json['error'] === 'validation_failed') {
    assert.equal(status, 422, `${context}: validation_failed must be a 422`)
    const details = json['details']
    assert.ok(Array.isArray(details) && details.length > 0, `${context}: a 422 names no field`)
    for (const detail of details as unknown[]) {
      assert.ok(typeof detail === 'object' && detail !== null, `${context}: a detail`)
      const entry = detail as Record<string, unknown>
      assert.deepEqual(Object.keys(entry).sort(), ['field', 'message'], `${context}: detail keys`)
      // A string, though possibly empty: a body's key may be "" and is then named as such.
      assert.equal(typeof entry['field'], 'string', `${context}: detail field`)
      assert.equal(typeof entry['message'], 'string', `${context}: detail message`)
      assert.ok((entry['message'] as string).length > 0, `${context}: empty detail message`)
      assertNoLeak(entry['message'] as string, context)
    }
  } else {
    assert.equal(json['details'], undefined, `${context}: details outside validation_failed`)
  }
  if (status === 429) assert.equal(typeof json['retry_after'], 'number', `${context}: retry_after`)
  else assert.equal(json['retry_after'], undefined, `${context}: retry_after outside a 429`)
  return json as unknown as ErrorBody
}

/** The field names of a 422's details, as a set. */
export function namedFields(body: ErrorBody): Set<string> {
  return new Set((body.details ?? []).map((detail) => detail.field))
}
