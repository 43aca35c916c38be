/**
 * The in-process micro-benchmark: each piece of the request path timed on its own, without the
 * network, so that a regression can be found where it happens. Token verification (cache hit
 * and miss), the limiter's take, the SQLite store's get by id and first page, the JSON of a
 * detail and of a list page, `service.get`, and the whole handler for a detail: without metrics,
 * with them (what counting a request costs), and answering 304 to If-None-Match; then a detail
 * and a list page with and without the access log (what recording a read costs, D35).
 *
 * Usage: `node dist/bench/micro.js --iterations 20000 --rows 100000`
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { openSqliteStorage, seedBeneficiaries } from '../adapters/sqlite/index.js'
import { AccessTokens } from '../core/access-tokens.js'
import { randomToken } from '../core/crypto.js'
import { createBeneficiaryService } from '../core/index.js'
import { JsonBytes } from '../core/json-bytes.js'
import { RateLimiter } from '../core/rate-limiter.js'
import { listItemOf, writeListItems } from '../core/representation.js'
import { systemClock } from '../core/system-clock.js'
import { fakeBeneficiaries } from '../server/cli/fake-beneficiaries.js'
import { createHandler } from '../server/handler.js'
import { ServerMetrics } from '../server/metrics/server-metrics.js'

/** Options of {@link runMicro}. */
export interface MicroOptions {
  /** Timed calls of each piece (after a warm-up of a tenth as many). */
  readonly iterations: number
  /** Beneficiaries seeded into the temporary SQLite file. Default 10,000. */
  readonly rows?: number
}

/** The timing of one piece. */
export interface MicroResult {
  readonly name: string
  readonly iterations: number
  readonly totalMs: number
  readonly opsPerSecond: number
  /** Mean time of one call, in microseconds. */
  readonly meanUs: number
}

type Operation = () => unknown

const UNLIMITED = { auth: 1_000_000, write: 1_000_000_000, standard: 1_000_000_000 }

/**
 * Times each piece of the request path for a bounded number of iterations, on a temporary
 * SQLite file that it deletes afterwards.
 *
 * @example
 * for (const r of await runMicro({ iterations: 10_000 })) console.log(r.name, r.opsPerSecond)
 *
 * @throws TypeError when `iterations` or `rows` is not a positive whole number.
 */
export async function runMicro(options: MicroOptions): Promise<MicroResult[]> {
  const { iterations } = options
  const rows = options.rows ?? 10_000
  if (!Number.isSafeInteger(iterations) || iterations < 1) {
    throw new TypeError('iterations must be a positive whole number')
  }
  if (!Number.isSafeInteger(rows) || rows < 1) {
    throw new TypeError('rows must be a positive whole number')
  }

  const dir = mkdtempSync(join(tmpdir(), 'beneficiary-micro-'))
  const storage = await openSqliteStorage({ path: join(dir, 'micro.db') })
  let second: Awaited<ReturnType<typeof openSqliteStorage>> | undefined
  try {
    await seedBeneficiaries(storage, fakeBeneficiaries({ count: rows, seed: 7 }))
    const service = await createBeneficiaryService({ storage, limits: UNLIMITED })
    const client = await service.clients.create({ name: 'micro', scopes: ['read', 'write'] })
    const { value: tokens } = await service.login({ ip: '127.0.0.1' }, client)
    const token = tokens.access_token
    const randomId = () => 1 + Math.floor(Math.random() * rows)

    const keys = [{ kid: 'micro', secret: randomToken(32) }]
    const settings = {
      keys,
      issuer: 'micro',
      audience: 'micro',
      ttlSeconds: 3600,
      clockSkewSeconds: 5,
    }
    const cached = await AccessTokens.create({ ...settings, cacheSize: 10_000 }, systemClock)
    // With room for one token, alternating two tokens makes every verification a miss.
    const uncached = await AccessTokens.create({ ...settings, cacheSize: 1 }, systemClock)
    const pair = [
      await cached.issue({ clientId: 'micro', scopes: ['read'], sid: 's1' }),
      await cached.issue({ clientId: 'micro', scopes: ['read'], sid: 's2' }),
    ] as const
    let flip = 0
    const limiter = new RateLimiter(UNLIMITED, systemClock)

    const detail = (await service.get({ token }, randomId())).value
    const page = (await service.list({ token }, {})).value
    const listQuery = { offset: 0, limit: 20, sort: 'id', descending: false } as const
    const summaries = (await storage.beneficiaries.list(listQuery)).items
    const json = new JsonBytes()
    const handler = createHandler(service)
    const counted = createHandler(service, { metrics: { collector: new ServerMetrics() } })
    // What recording every read costs (D35): the same file as `serve` opens it, its writes
    // (the access log's batches among them) on the writer thread, with and without the log.
    const threaded = await openSqliteStorage({ path: join(dir, 'micro.db'), writer: 'thread' })
    second = threaded
    const logged = createHandler(
      await createBeneficiaryService({ storage: threaded, limits: UNLIMITED }),
    )
    const unlogged = createHandler(
      await createBeneficiaryService({
        storage: {
          beneficiaries: threaded.beneficiaries,
          clients: threaded.clients,
          sessions: threaded.sessions,
          signingKeys: threaded.signingKeys,
          ping: () => threaded.ping(),
          close: () => threaded.close(),
        },
        limits: UNLIMITED,
      }),
    )
    const listRequest = {
      method: 'GET',
      path: '/v3/beneficiaries',
      query: 'per_page=20',
      headers: { authorization: `Bearer ${token}` },
      body: undefined,
      remoteAddress: '127.0.0.1',
    }
    const detailRequest = (headers: Record<string, string>) => ({
      method: 'GET',
      path: `/v3/beneficiaries/${randomId()}`,
      query: '',
      headers: { authorization: `Bearer ${token}`, ...headers },
      body: undefined,
      remoteAddress: '127.0.0.1',
    })

    const pieces: [string, Operation][] = [
      ['token verify, cache hit', () => cached.verify(pair[0])],
      ['token verify, cache miss (HS256)', () => uncached.verify(pair[flip++ & 1]!)],
      ['limiter take', () => limiter.take('standard', 'micro-client')],
      ['sqlite get by id', () => storage.beneficiaries.get(randomId())],
      ['sqlite first page (20, with count)', () => storage.beneficiaries.list(listQuery)],
      ['JSON.stringify detail', () => JSON.stringify(detail)],
      ['JSON.stringify list page', () => JSON.stringify(page)],
      ['list items: listItemOf, JSON.stringify, UTF-8', () => utf8(summaries.map(listItemOf))],
      [
        'list items: JSON bytes (writeListItems)',
        () => {
          writeListItems(json, summaries)
          return json.take()
        },
      ],
      ['service.get', () => service.get({ token }, randomId())],
      ['service.list first page', () => service.list({ token }, {})],
      [
        'service.list first page, JSON.stringify, UTF-8',
        async () => utf8((await service.list({ token }, {})).value),
      ],
      ['service.listJson first page (UTF-8 JSON)', () => service.listJson({ token }, {})],
      ['handler GET detail', () => handler(detailRequest({}))],
      ['handler GET detail, with metrics', () => counted(detailRequest({}))],
      ['handler GET detail, 304', () => handler(detailRequest({ 'if-none-match': '*' }))],
      ['writer thread: handler GET detail, no access log', () => unlogged(detailRequest({}))],
      ['writer thread: handler GET detail', () => logged(detailRequest({}))],
      ['writer thread: handler GET list page, no access log', () => unlogged(listRequest)],
      ['writer thread: handler GET list page', () => logged(listRequest)],
    ]
    const results: MicroResult[] = []
    for (const [name, operation] of pieces) {
      results.push(await time(name, operation, iterations))
    }
    return results
  } finally {
    await second?.close()
    await storage.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

const ENCODER = new TextEncoder()

/** What a list's items cost without `JsonBytes`: the objects, their JSON, its UTF-8. */
function utf8(value: unknown): Uint8Array {
  return ENCODER.encode(JSON.stringify(value))
}

async function time(name: string, operation: Operation, iterations: number): Promise<MicroResult> {
  const first = operation()
  const isAsync = first instanceof Promise
  if (isAsync) await first
  const run = async (count: number) => {
    if (isAsync) for (let i = 0; i < count; i++) await operation()
    else for (let i = 0; i < count; i++) operation()
  }
  await run(Math.max(1, Math.floor(iterations / 10)))
  const started = performance.now()
  await run(iterations)
  const totalMs = performance.now() - started
  return {
    name,
    iterations,
    totalMs,
    opsPerSecond: iterations / (totalMs / 1000),
    meanUs: (totalMs * 1000) / iterations,
  }
}

/** The results as an aligned table. */
export function formatMicro(results: readonly MicroResult[]): string {
  const width = Math.max(...results.map((r) => r.name.length))
  return results
    .map(
      (r) =>
        `${r.name.padEnd(width)}  ${Math.round(r.opsPerSecond).toLocaleString('en-US').padStart(12)} ops/s  ` +
        `${r.meanUs.toFixed(2).padStart(10)} µs/op`,
    )
    .join('\n')
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      iterations: { type: 'string', default: '20000' },
      rows: { type: 'string', default: '100000' },
    },
  })
  const results = await runMicro({
    iterations: Number(values.iterations),
    rows: Number(values.rows),
  })
  console.log(formatMicro(results))
}
