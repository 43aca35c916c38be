import { randomBytes, createHash } from 'node:crypto'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import { openPostgresStorage } from '../adapters/postgres/index.js'
import { postgresMigrations } from '../adapters/postgres/postgres-migrations.js'
import { createClientAdmin } from '../core/index.js'
import type { Credentials } from './bench-data.js'
import { exitOf, type ProcessGroup } from './process-group.js'

/** The PostgreSQL server of the benchmark, overridable by `BENCH_DATABASE_URL`. */
export const BENCH_POSTGRES_URL =
  process.env['BENCH_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres'

/** The PostgreSQL databases of a run: one seeded once, copied afresh for every target. */
export interface PgBenchData {
  /** Seeded once and kept: the service's tables in `public`, the peer's in `peer`. */
  readonly seedDatabase: string
  readonly client: Credentials
  readonly peerClient: Credentials
}

/** Raised when what is seeded changes. */
const FORMAT = 1
const SEED_TIMEOUT_MS = 60 * 60 * 1000

/**
 * Seeds a PostgreSQL database with `rows` beneficiaries through the CLI's `seed` (the same
 * generator and seed as the SQLite data, so the scenarios find the same rows), provisions a
 * client, and copies the rows into the peer's own table in schema `peer` of the same database.
 * Kept across runs while `pg-meta-<rows>.json` says it is current.
 */
export async function preparePgData(
  group: ProcessGroup,
  where: { readonly dataDir: string; readonly distRoot: string; readonly repoRoot: string },
  rows: number,
): Promise<PgBenchData> {
  const seedDatabase = `bench_seed_${rows}`
  const metaFile = join(where.dataDir, `pg-meta-${rows}.json`)
  const schema = Object.keys(postgresMigrations('public')).join(',')
  if (existsSync(metaFile) && (await databaseExists(seedDatabase))) {
    const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as PgBenchData & {
      format: number
      schema: string
    }
    if (meta.format === FORMAT && meta.schema === schema) return meta
  }
  await admin(`DROP DATABASE IF EXISTS ${seedDatabase} WITH (FORCE)`)
  await admin(`CREATE DATABASE ${seedDatabase}`)
  const url = databaseUrl(seedDatabase)
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

  const storage = await openPostgresStorage({ connectionString: url })
  let client: Credentials
  try {
    const provisioned = await createClientAdmin({ storage }).create({
      name: 'bench',
      scopes: ['read', 'write'],
    })
    client = { client_id: provisioned.client_id, client_secret: provisioned.client_secret }
  } finally {
    await storage.close()
  }
  const peerClient = await buildPeerTable(where.repoRoot, url)
  const data: PgBenchData = { seedDatabase, client, peerClient }
  writeFileSync(metaFile, `${JSON.stringify({ format: FORMAT, schema, ...data }, null, 2)}\n`, {
    mode: 0o600,
  })
  return data
}

/** A fresh copy of the seeded database for one target; dropped again by `dropDatabase`. */
export async function copyDatabase(seedDatabase: string, copy: string): Promise<string> {
  await admin(`DROP DATABASE IF EXISTS ${copy} WITH (FORCE)`)
  await admin(`CREATE DATABASE ${copy} TEMPLATE ${seedDatabase}`)
  return databaseUrl(copy)
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
    await db.query('VACUUM ANALYZE')
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

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: BENCH_POSTGRES_URL })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}
