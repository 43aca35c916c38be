import { randomBytes, createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import { openPostgresStorage } from '../adapters/postgres/index.js'
import { postgresMigrations } from '../adapters/postgres/postgres-migrations.js'
import { createClientAdmin } from '../core/index.js'
import type { BeneficiaryStatus } from '../core/beneficiary.js'
import { DAY_MS } from '../core/time.js'
import type { Credentials } from './bench-data.js'
import type { DataProfile } from './data-profile.js'
import { exitOf, type ProcessGroup } from './process-group.js'
import { searchAndMonth, type ScenarioData } from './scenarios.js'
import { processCpuMs } from './targets.js'

/** The PostgreSQL server of the benchmark, overridable by `BENCH_DATABASE_URL`. */
export const BENCH_POSTGRES_URL =
  process.env['BENCH_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres'

/** The PostgreSQL databases of a run: one seeded once, copied afresh for every target. */
export interface PgBenchData extends ScenarioData {
  readonly rows: number
  /** Seeded once and kept: the service's tables in `public`, the peer's in `peer`. */
  readonly seedDatabase: string
  readonly client: Credentials
  /** The peer's client, once its table is built (only for a run with `pg-peer`). */
  readonly peerClient?: Credentials
}

type Cached = PgBenchData & { readonly format: number; readonly schema: string }

/** Raised when what is seeded changes (2: the scenarios' data, the peer's table on demand). */
const FORMAT = 2
const SEED_TIMEOUT_MS = 3 * 60 * 60 * 1000

/**
 * Seeds a PostgreSQL database with `rows` beneficiaries through the CLI's `seed` (the same
 * generator and seed as the SQLite data, so the scenarios find the same rows), provisions a
 * client, reads what the scenarios need, and, for a run with the peer (`withPeer`), copies the
 * rows into the peer's own table in schema `peer` of the same database. Kept across runs while
 * `pg-meta-<rows>.json` says it is current. A seed that stopped (the run interrupted) resumes:
 * the database stays, and `seed` goes on after the batches it committed.
 */
export async function preparePgData(
  group: ProcessGroup,
  where: { readonly dataDir: string; readonly distRoot: string; readonly repoRoot: string },
  rows: number,
  withPeer: boolean,
): Promise<PgBenchData> {
  // The meta file holds an API client's secret: the owner's alone, as `prepareData` keeps it.
  mkdirSync(where.dataDir, { recursive: true, mode: 0o700 })
  const seedDatabase = `bench_seed_${rows}`
  const metaFile = join(where.dataDir, `pg-meta-${rows}.json`)
  const schema = Object.keys(postgresMigrations('public')).join(',')
  const url = databaseUrl(seedDatabase)
  let data: PgBenchData | undefined
  if (existsSync(metaFile) && (await databaseExists(seedDatabase))) {
    const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as Cached
    if (meta.format === FORMAT && meta.schema === schema) data = meta
  }
  if (data === undefined) {
    if (!(await databaseExists(seedDatabase))) await admin(`CREATE DATABASE ${seedDatabase}`)
    console.log(`seeding ${rows.toLocaleString('en-US')} beneficiaries into PostgreSQL (once)`)
    const started = performance.now()
    const child = group.spawn(
      process.execPath,
      [
        join(where.distRoot, 'server', 'cli.js'),
        'seed',
        '--database-url',
        url,
        '--count',
        String(rows),
      ],
      { stdio: ['ignore', 'inherit', 'inherit'] },
    )
    const watchdog = setTimeout(() => void group.stop(child), SEED_TIMEOUT_MS)
    const code = await exitOf(child)
    clearTimeout(watchdog)
    if (code !== 0) throw new Error(`seeding PostgreSQL failed (${String(code)})`)
    console.log(`  seeded in ${((performance.now() - started) / 1000).toFixed(1)} s`)
    data = { rows, seedDatabase, client: await provisionClient(url), ...(await describe(url)) }
  }
  if (withPeer && data.peerClient === undefined) {
    data = { ...data, peerClient: await buildPeerTable(where.repoRoot, url) }
  }
  writeFileSync(metaFile, `${JSON.stringify({ format: FORMAT, schema, ...data }, null, 2)}\n`, {
    mode: 0o600,
  })
  return data
}

async function provisionClient(url: string): Promise<Credentials> {
  const storage = await openPostgresStorage({ connectionString: url })
  try {
    const provisioned = await createClientAdmin({ storage }).create({
      name: 'bench',
      scopes: ['read', 'write'],
    })
    return { client_id: provisioned.client_id, client_secret: provisioned.client_secret }
  } finally {
    await storage.close()
  }
}

/** What the scenarios need, read as `describeServiceData` reads it from SQLite. */
async function describe(url: string): Promise<ScenarioData> {
  const db = new pg.Client({ connectionString: url })
  await db.connect()
  try {
    const { rows: found } = await db.query<{
      max_id: string
      common: string
      first: string
      last: string
    }>(`SELECT (SELECT max(id) FROM beneficiaries) AS max_id,
        (SELECT last_name FROM beneficiaries GROUP BY last_name ORDER BY count(*) DESC LIMIT 1)
          AS common,
        (SELECT min(created_at) FROM beneficiaries) AS first,
        (SELECT max(created_at) FROM beneficiaries) AS last`)
    const row = found[0]!
    return {
      maxId: Number(row.max_id),
      ...searchAndMonth(row.common, Number(row.first), Number(row.last)),
    }
  } finally {
    await db.end()
  }
}

/**
 * The profile of the seeded rows (`readDataProfile` on SQLite), read once and cached beside the
 * meta file: two grouped scans, tens of seconds at 10,000,000 rows.
 */
export async function readPgDataProfile(dataDir: string, data: PgBenchData): Promise<DataProfile> {
  const file = join(dataDir, `pg-profile-${data.rows}.json`)
  if (existsSync(file)) {
    const cached = JSON.parse(readFileSync(file, 'utf8')) as DataProfile & { client_id: string }
    if (cached.client_id === data.client.client_id) return cached
  }
  const db = new pg.Client({ connectionString: databaseUrl(data.seedDatabase) })
  await db.connect()
  try {
    const names = await db.query<{ first: string; last: string; status: string; count: string }>(
      `SELECT first_name AS first, last_name AS last, status, count(*) AS count
       FROM beneficiaries GROUP BY first_name, last_name, status`,
    )
    const days = await db.query<{ day: string; status: string; count: string }>(
      `SELECT to_char(to_timestamp((created_at / ${DAY_MS}) * 86400) AT TIME ZONE 'UTC',
         'YYYY-MM-DD') AS day, status, count(*) AS count
       FROM beneficiaries GROUP BY created_at / ${DAY_MS}, status
       ORDER BY created_at / ${DAY_MS}, status`,
    )
    const profile: DataProfile = {
      rows: names.rows.reduce((sum, n) => sum + Number(n.count), 0),
      maxId: data.maxId,
      names: names.rows.map((n) => ({
        first: n.first,
        last: n.last,
        status: n.status as BeneficiaryStatus,
        count: Number(n.count),
      })),
      days: days.rows.map((d) => ({
        day: d.day,
        status: d.status as BeneficiaryStatus,
        count: Number(d.count),
      })),
    }
    writeFileSync(file, JSON.stringify({ client_id: data.client.client_id, ...profile }), {
      mode: 0o600,
    })
    return profile
  } finally {
    await db.end()
  }
}

/** A fresh copy of the seeded database for one target; dropped again by `dropDatabase`. */
export async function copyDatabase(seedDatabase: string, copy: string): Promise<string> {
  await admin(`DROP DATABASE IF EXISTS ${copy} WITH (FORCE)`)
  // From PostgreSQL 15 a copy is written through the WAL by default: gigabytes of it at
  // 10,000,000 rows, where copying the files takes one checkpoint.
  const fileCopy = (await serverVersion()) >= 150_000 ? ' STRATEGY FILE_COPY' : ''
  await admin(`CREATE DATABASE ${copy} TEMPLATE ${seedDatabase}${fileCopy}`)
  return databaseUrl(copy)
}

async function serverVersion(): Promise<number> {
  const client = new pg.Client({ connectionString: BENCH_POSTGRES_URL })
  await client.connect()
  try {
    const found = await client.query<{ v: string }>('SHOW server_version_num')
    return Number(found.rows[0]!.v)
  } finally {
    await client.end()
  }
}

export async function dropDatabase(name: string): Promise<void> {
  await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
}

/** The URL of `database` on the benchmark's server; `searchPath` for the peer's schema. */
export function databaseUrl(database: string, searchPath?: string): string {
  const url = new URL(BENCH_POSTGRES_URL)
  url.pathname = `/${database}`
  if (searchPath !== undefined) url.searchParams.set('options', `-c search_path=${searchPath}`)
  return url.toString()
}

/** The peer's schema and client, and the service's rows in the peer's shape. */
async function buildPeerTable(repoRoot: string, url: string): Promise<Credentials> {
  const secret = randomBytes(32).toString('base64url')
  const db = new pg.Client({ connectionString: url })
  await db.connect()
  try {
    await db.query('CREATE SCHEMA peer')
    await db.query('SET search_path = peer')
    await db.query(readFileSync(join(repoRoot, 'bench', 'peer', 'schema-pg.sql'), 'utf8'))
    const iso = (column: string) =>
      `to_char(to_timestamp(${column} / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
    await db.query(`
      INSERT INTO peer.beneficiaries
        (id, first_name, last_name, email, phone, date_of_birth, fiscal_code, address, status,
         metadata, created_at, updated_at)
      SELECT id, first_name, last_name, email, phone, date_of_birth, fiscal_code,
        CASE WHEN address_street IS NULL THEN NULL ELSE json_build_object(
          'street', address_street, 'city', address_city,
          'postal_code', address_postal_code, 'country', address_country)::text END,
        status, metadata::text, ${iso('created_at')}, ${iso('updated_at')}
      FROM public.beneficiaries ORDER BY id`)
    await db.query(
      `SELECT setval(pg_get_serial_sequence('peer.beneficiaries', 'id'), (SELECT max(id) FROM peer.beneficiaries))`,
    )
    const hash = createHash('sha256').update(secret).digest('hex')
    await db.query('INSERT INTO peer.clients (id, secret_hash, scopes) VALUES ($1, $2, $3)', [
      'bench',
      hash,
      'read write',
    ])
    await db.query('RESET search_path')
    await db.query('VACUUM ANALYZE peer.beneficiaries')
  } finally {
    await db.end()
  }
  return { client_id: 'bench', client_secret: secret }
}

/**
 * Waits until no statement runs on `database` for half a second: the requests a slow target
 * still has queued in its pool from one scenario must not be charged to the next. After
 * `timeoutMs` the statements still running are cancelled.
 */
export async function waitForDatabaseIdle(database: string, timeoutMs = 120_000): Promise<void> {
  const client = new pg.Client({ connectionString: BENCH_POSTGRES_URL })
  await client.connect()
  try {
    const deadline = performance.now() + timeoutMs
    let quietSince: number | undefined
    for (;;) {
      const active = await client.query<{ n: string }>(
        `SELECT count(*) AS n FROM pg_stat_activity
         WHERE datname = $1 AND state <> 'idle' AND pid <> pg_backend_pid()`,
        [database],
      )
      const now = performance.now()
      if (Number(active.rows[0]!.n) === 0) {
        quietSince ??= now
        if (now - quietSince >= 500) return
      } else quietSince = undefined
      if (now > deadline) {
        await client.query(
          `SELECT pg_cancel_backend(pid) FROM pg_stat_activity
           WHERE datname = $1 AND state <> 'idle' AND pid <> pg_backend_pid()`,
          [database],
        )
        return
      }
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  } finally {
    await client.end()
  }
}

/** CPU time so far of each backend, by pid, in milliseconds. */
export type BackendCpu = ReadonlyMap<number, number>

/**
 * The CPU time so far of every client backend connected to `database` (its pools' connections),
 * read from `/proc/<pid>/stat`: PostgreSQL runs on this machine in the benchmark.
 */
export async function backendCpuMs(database: string): Promise<BackendCpu> {
  const client = new pg.Client({ connectionString: BENCH_POSTGRES_URL })
  await client.connect()
  try {
    const found = await client.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity
       WHERE datname = $1 AND backend_type = 'client backend' AND pid <> pg_backend_pid()`,
      [database],
    )
    return new Map(found.rows.map(({ pid }) => [pid, processCpuMs(pid)]))
  } finally {
    await client.end()
  }
}

async function databaseExists(name: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: BENCH_POSTGRES_URL })
  await client.connect()
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])
    return found.rowCount === 1
  } finally {
    await client.end()
  }
}

export async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: BENCH_POSTGRES_URL })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}
