/**
 * `node dist/bench/match.js`: duplicate matching (D38) measured against ground truth, and its
 * latency under load, on SQLite and PostgreSQL.
 *
 * 1. Seeds `--rows` made-up beneficiaries (the CLI's `seed` generator) into a SQLite file and a
 *    PostgreSQL database of their own (kept under `bench/.data/` and as `bench_match_<rows>`,
 *    reused while `bench/.data/match-<rows>.json` is there), and plants `--duplicates` of them
 *    again with typos, swapped names, another e-mail, another phone, dropped diacritics
 *    (`bench/match-duplicates.ts`), through each adapter's bulk loader.
 * 2. Quality: asks the service, in process, for the matches of every planted duplicate
 *    (`matches(id)`, the default rules) and prints recall (the share of duplicates whose
 *    original is among the matches) and precision (the share of matches that are the original).
 * 3. Load: starts the real server (`serve`, uws) on each database pinned to core 0, and wrk on
 *    core 1 with `--connections`: `GET /v3/beneficiaries/{id}/matches` over the duplicates' ids,
 *    and `GET /v3/beneficiaries/{id}` over the same ids for comparison, `--rounds` times each,
 *    printing p50, p99 and the server's CPU time per request of each round and their medians.
 *
 * Options: `--rows N` (100,000), `--duplicates N` (10,000), `--targets sqlite,pg`,
 * `--duration S` (5), `--warmup S` (2), `--rounds N` (3), `--connections N` (50), `--seed N` (1),
 * `--skip-load` (quality only).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { openPostgresStorage, seedPostgres } from '../adapters/postgres/index.js'
import { openSqliteStorage, seedBeneficiaries } from '../adapters/sqlite/index.js'
import { createBeneficiaryService, type Storage } from '../core/index.js'
import { fakeBeneficiaries } from '../server/cli/fake-beneficiaries.js'
import { nodeSha256 } from '../server/node-sha256.js'
import { plantDuplicates, type DuplicateChange } from './match-duplicates.js'
import { measure } from './measure.js'
import { BENCH_POSTGRES_URL, databaseUrl } from './pg-bench-data.js'
import { ProcessGroup, hasExited } from './process-group.js'
import type { Measurement } from './result-table.js'
import { SeededRandom } from './seeded-random.js'
import { ensureWrk } from './wrk-runner.js'

const SERVER_CORE = 0
const LOAD_CORE = 1
/** The seeded records' clock: fixed, so that the same options give the same data. */
const SEEDED_AT = Date.UTC(2026, 0, 1)
const UNLIMITED_ENV = {
  RATE_LIMIT_STANDARD: '1000000000',
  RATE_LIMIT_WRITE: '1000000000',
  RATE_LIMIT_AUTH: '1000000',
}

const distRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const repoRoot = resolve(distRoot, '..')
const dataDir = join(repoRoot, 'bench', '.data')

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '100000' },
    duplicates: { type: 'string', default: '10000' },
    targets: { type: 'string', default: 'sqlite,pg' },
    duration: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
    seed: { type: 'string', default: '1' },
    'skip-load': { type: 'boolean', default: false },
  },
})
const rows = Number(values.rows)
const duplicates = Math.min(Number(values.duplicates), Math.floor(rows / 2))
const targets = values.targets.split(',') as ('sqlite' | 'pg')[]
const durationSeconds = Number(values.duration)
const warmupSeconds = Number(values.warmup)
const rounds = Number(values.rounds)
const connections = Number(values.connections)
const seed = Number(values.seed)

/** What a seeded data set is: where, and its ground truth. */
interface MatchData {
  readonly credentials: { client_id: string; client_secret: string }
  /** Duplicate id → original id. */
  readonly truth: readonly (readonly [number, number])[]
  readonly changes: readonly (readonly DuplicateChange[])[]
}

const group = new ProcessGroup()
process.on('exit', () => group.killAllNow())

try {
  mkdirSync(dataDir, { recursive: true })
  for (const target of targets) await run(target)
} finally {
  await group.stopAll()
}

async function run(target: 'sqlite' | 'pg'): Promise<void> {
  const started = performance.now()
  const { storage, data, serveArgs } = await prepare(target)
  console.log(
    `${target}: ${rows} rows, ${data.truth.length} planted duplicates ready in ${seconds(started)} s`,
  )
  try {
    await quality(target, storage, data)
  } finally {
    await storage.close()
  }
  if (values['skip-load'] !== true) await load(target, data, serveArgs)
}

async function prepare(
  target: 'sqlite' | 'pg',
): Promise<{ storage: Storage; data: MatchData; serveArgs: string[] }> {
  const metaFile = join(dataDir, `match-${target}-${rows}-${duplicates}-${seed}.json`)
  const path = join(dataDir, `match-${rows}-${duplicates}-${seed}.db`)
  const database = `bench_match_${rows}_${duplicates}_${seed}`
  const url = databaseUrl(database)
  const serveArgs = target === 'sqlite' ? ['--db', path] : ['--database-url', url]
  const open = async (): Promise<Storage> =>
    target === 'sqlite'
      ? openSqliteStorage({ path })
      : openPostgresStorage({ connectionString: url, poolSize: 4 })
  if (existsSync(metaFile)) {
    return {
      storage: await open(),
      data: JSON.parse(readFileSync(metaFile, 'utf8')) as MatchData,
      serveArgs,
    }
  }
  if (target === 'sqlite') rmSync(path, { force: true })
  else await recreateDatabase(database)
  const storage = await open()
  const records = fakeBeneficiaries({ count: rows, seed: 1, now: SEEDED_AT })
  const firstId =
    target === 'sqlite'
      ? (await seedBeneficiaries(storage as never, records)).firstId
      : (await seedPostgres(storage as never, records)).firstId
  const random = new SeededRandom(seed)
  const picked = new Set<number>()
  while (picked.size < duplicates) picked.add(firstId + Math.floor(random.next() * rows))
  const originals = []
  for (const id of picked) originals.push((await storage.beneficiaries.get(id))!)
  const planted = plantDuplicates(originals, seed)
  const loaded =
    target === 'sqlite'
      ? await seedBeneficiaries(
          storage as never,
          planted.map((dup) => dup.record),
        )
      : await seedPostgres(
          storage as never,
          planted.map((dup) => dup.record),
        )
  const service = await createBeneficiaryService({ storage, sha256: nodeSha256 })
  const client = await service.clients.create({ name: 'match bench', scopes: ['read'] })
  const data: MatchData = {
    credentials: { client_id: client.client_id, client_secret: client.client_secret },
    truth: planted.map((dup, i) => [loaded.firstId + i, dup.originalId] as const),
    changes: planted.map((dup) => dup.changes),
  }
  writeFileSync(metaFile, JSON.stringify(data))
  return { storage, data, serveArgs }
}

async function recreateDatabase(database: string): Promise<void> {
  const client = new pg.Client({ connectionString: BENCH_POSTGRES_URL })
  await client.connect()
  try {
    await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
    await client.query(`CREATE DATABASE ${database}`)
  } finally {
    await client.end()
  }
}

/** Recall and precision of the default rules over every planted duplicate. */
async function quality(target: string, storage: Storage, data: MatchData): Promise<void> {
  const limits = { auth: 1000, write: 1000, standard: 1_000_000_000 }
  const service = await createBeneficiaryService({ storage, sha256: nodeSha256, limits })
  const tokens = await service.login({ ip: '127.0.0.1' }, data.credentials)
  const ctx = { token: tokens.value.access_token }
  let found = 0
  let returned = 0
  const byChange = new Map<DuplicateChange, { n: number; found: number }>()
  const started = performance.now()
  for (const [i, [duplicate, original]] of data.truth.entries()) {
    const { value } = await service.matches(ctx, duplicate)
    const hit = value.data.some((match) => match.id === original)
    if (hit) found++
    returned += value.data.length
    for (const change of data.changes[i]!) {
      const counts = byChange.get(change) ?? { n: 0, found: 0 }
      counts.n++
      if (hit) counts.found++
      byChange.set(change, counts)
    }
  }
  const elapsed = performance.now() - started
  const recall = found / data.truth.length
  const precision = returned === 0 ? 1 : found / returned
  console.log(
    `${target}: recall ${recall.toFixed(4)} (${found}/${data.truth.length}), precision ${precision.toFixed(4)} (${found}/${returned}) at the default threshold; ${(elapsed / data.truth.length).toFixed(2)} ms a match in process`,
  )
  const kinds = [...byChange].map(
    ([change, { n, found: hits }]) => `${change} ${(hits / n).toFixed(3)} of ${n}`,
  )
  console.log(`${target}: recall by change: ${kinds.join(', ')}`)
}

/** p50/p99 and CPU per request of a match and of a get, at `connections`, each round. */
async function load(target: string, data: MatchData, serveArgs: string[]): Promise<void> {
  ensureWrk()
  const port = 20_000 + Math.floor(Math.random() * 20_000)
  const baseUrl = `http://127.0.0.1:${port}`
  const server = group.spawn(
    process.execPath,
    [
      join(distRoot, 'server', 'cli.js'),
      'serve',
      ...serveArgs,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--transport',
      'uws',
    ],
    {
      core: SERVER_CORE,
      env: { ...process.env, ...UNLIMITED_ENV, NODE_ENV: 'production', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  )
  try {
    await waitForHealth(baseUrl, () => hasExited(server))
    const token = await login(baseUrl, data.credentials)
    const ids = data.truth.map(([duplicate]) => duplicate)
    const pathsDir = join(dataDir, `match-paths-${process.pid}`)
    mkdirSync(pathsDir, { recursive: true })
    const files = {
      match: join(pathsDir, 'match.txt'),
      get: join(pathsDir, 'get.txt'),
    }
    writeFileSync(files.match, ids.map((id) => `/v3/beneficiaries/${id}/matches`).join('\n'))
    writeFileSync(files.get, ids.map((id) => `/v3/beneficiaries/${id}`).join('\n'))
    const results: Record<'get' | 'match', Measurement[]> = { get: [], match: [] }
    try {
      for (let round = 1; round <= rounds; round++) {
        for (const scenario of ['get', 'match'] as const) {
          const run = {
            script: join(repoRoot, 'bench', 'wrk', 'paths.lua'),
            baseUrl,
            connections,
            core: LOAD_CORE,
            env: {
              BENCH_TOKEN: token,
              BENCH_LUA_DIR: join(repoRoot, 'bench', 'wrk'),
              BENCH_PATHS_FILE: files[scenario],
            },
          }
          const loads = [{ load: scenario, run }]
          if (warmupSeconds > 0)
            await measure(group, [server.pid], loads, warmupSeconds, {
              target: 'uws',
              scenario,
              round,
              attempts: 1,
            })
          const measured = await measure(group, [server.pid], loads, durationSeconds, {
            target: target === 'pg' ? 'pg' : 'uws',
            scenario,
            round,
            attempts: 1,
          })
          results[scenario].push(measured)
          console.log(
            `${target} round ${round} ${scenario.padEnd(5)}: ${measured.requestsPerSecond.toFixed(0)} req/s, p50 ${measured.p50Ms.toFixed(2)} ms, p99 ${measured.p99Ms.toFixed(2)} ms, ${measured.cpuUsPerRequest.toFixed(0)} µs CPU a request, ${measured.non2xx} non-2xx, steal ${measured.stealPercent.toFixed(1)} %`,
          )
        }
      }
    } finally {
      rmSync(pathsDir, { recursive: true, force: true })
    }
    const median = (values: number[]) =>
      values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!
    const of = (scenario: 'get' | 'match', pick: (m: Measurement) => number) =>
      median(results[scenario].map(pick))
    const cpuRatio = of('match', (m) => m.cpuUsPerRequest) / of('get', (m) => m.cpuUsPerRequest)
    console.log(
      `${target} median of ${rounds}: match p50 ${of('match', (m) => m.p50Ms).toFixed(2)} ms, p99 ${of('match', (m) => m.p99Ms).toFixed(2)} ms, ${of('match', (m) => m.cpuUsPerRequest).toFixed(0)} µs CPU; get p50 ${of('get', (m) => m.p50Ms).toFixed(2)} ms, p99 ${of('get', (m) => m.p99Ms).toFixed(2)} ms, ${of('get', (m) => m.cpuUsPerRequest).toFixed(0)} µs CPU; match/get CPU ${cpuRatio.toFixed(2)}×`,
    )
  } finally {
    await group.stop(server)
  }
}

async function waitForHealth(baseUrl: string, exited: () => boolean): Promise<void> {
  const deadline = performance.now() + 60_000
  while (performance.now() < deadline) {
    if (exited()) throw new Error('the server exited')
    try {
      const response = await fetch(`${baseUrl}/healthz`)
      await response.arrayBuffer()
      if (response.ok) return
    } catch {
      // Not listening yet.
    }
    await new Promise((done) => setTimeout(done, 100))
  }
  throw new Error('the server did not start')
}

async function login(baseUrl: string, credentials: MatchData['credentials']): Promise<string> {
  const response = await fetch(`${baseUrl}/v3/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(credentials),
  })
  const body = (await response.json()) as { access_token?: string }
  if (body.access_token === undefined) throw new Error(`login failed: ${response.status}`)
  return body.access_token
}

function seconds(since: number): string {
  return ((performance.now() - since) / 1000).toFixed(1)
}
