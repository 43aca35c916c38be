import { createHash, randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { openSqliteStorage } from '../adapters/sqlite/index.js'
import { SQLITE_MIGRATIONS } from '../adapters/sqlite/migrations/sqlite-migrations.js'
import { createBeneficiaryService } from '../core/index.js'
import { exitOf, type ProcessGroup } from './process-group.js'
import { searchAndMonth, type ScenarioData } from './scenarios.js'

/** Credentials of an API client, as the CLI prints them. */
export interface Credentials {
  readonly client_id: string
  readonly client_secret: string
}

/** The seeded databases and what the scenarios need to know about them. */
export interface BenchData extends ScenarioData {
  readonly rows: number
  /** The service's database, seeded by the CLI; never served directly (targets get a copy). */
  readonly serviceDb: string
  /** The peer's database, holding the same rows in its own table. */
  readonly peerDb: string
  /** A real detail response of median size, served by the limit. */
  readonly detailBodyFile: string
  readonly detailBytes: number
  readonly client: Credentials
  readonly peerClient: Credentials
  /** The peer's effective `PRAGMA synchronous` (0 OFF, 1 NORMAL, 2 FULL). */
  readonly peerSynchronous: number
}

/** Where things are. */
export interface DataLocations {
  /** `bench/.data`: the cache, kept across runs. */
  readonly dataDir: string
  /** The compiled project (`dist`), where `server/cli.js` lives. */
  readonly distRoot: string
  /** The repository, where `bench/peer/schema.sql` lives. */
  readonly repoRoot: string
}

type Cached = BenchData & { readonly format: number; readonly schema: string }

/** Raised when the seeded data change (2: the search index merged after seeding). */
const FORMAT = 2
const SEED_TIMEOUT_MS = 60 * 60 * 1000
const UNLIMITED = { auth: 1_000_000, write: 1_000_000_000, standard: 1_000_000_000 }

/**
 * Seeds the service's database with `rows` beneficiaries through the CLI's `seed` (once: the
 * files are cached under `dataDir` and reused while `meta-<rows>.json` is there), provisions an
 * API client, and copies the same rows into the peer's own table.
 */
export async function prepareData(
  group: ProcessGroup,
  where: DataLocations,
  rows: number,
): Promise<BenchData> {
  // The cache holds an API client's secret and copies of the seeded personal data: the owner's
  // alone, also when it was made before with a laxer mode.
  mkdirSync(where.dataDir, { recursive: true, mode: 0o700 })
  chmodSync(where.dataDir, 0o700)
  const metaFile = join(where.dataDir, `meta-${rows}.json`)
  const serviceDb = join(where.dataDir, `service-${rows}.db`)
  const peerDb = join(where.dataDir, `peer-${rows}.db`)
  const detailBodyFile = join(where.dataDir, `detail-${rows}.json`)
  // A cache seeded under an older schema is seeded again rather than migrated at every start.
  const schema = Object.keys(SQLITE_MIGRATIONS).join(',')
  if (existsSync(metaFile) && existsSync(serviceDb) && existsSync(peerDb)) {
    const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as Cached
    // The files are found where they are now, should the checkout have moved.
    if (meta.format === FORMAT && meta.schema === schema) {
      return { ...meta, serviceDb, peerDb, detailBodyFile }
    }
  }
  for (const file of [metaFile, serviceDb, peerDb, detailBodyFile]) removeDatabase(file)

  console.log(
    `seeding ${rows.toLocaleString('en-US')} beneficiaries (once; cached in ${where.dataDir})`,
  )
  const started = performance.now()
  await seedWithCli(group, where.distRoot, serviceDb, rows)
  console.log(`  seeded in ${((performance.now() - started) / 1000).toFixed(1)} s`)

  const service = await describeServiceData(serviceDb, detailBodyFile)
  const peer = buildPeerDatabase(where.repoRoot, serviceDb, peerDb)
  const data: Cached = {
    format: FORMAT,
    schema,
    rows,
    serviceDb,
    peerDb,
    detailBodyFile,
    ...service,
    ...peer,
  }
  writeFileSync(metaFile, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 })
  return data
}

/** Deletes a SQLite file with its WAL and shared-memory files. */
export function removeDatabase(file: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${file}${suffix}`, { force: true })
}

async function seedWithCli(
  group: ProcessGroup,
  distRoot: string,
  file: string,
  rows: number,
): Promise<void> {
  const child = group.spawn(
    process.execPath,
    [join(distRoot, 'server', 'cli.js'), 'seed', '--db', file, '--count', String(rows)],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  )
  const watchdog = setTimeout(() => void group.stop(child), SEED_TIMEOUT_MS)
  const code = await exitOf(child)
  clearTimeout(watchdog)
  if (code !== 0) throw new Error(`seeding failed (${String(code)})`)
}

/** Provisions the bench client, and reads what the scenarios need from the seeded rows. */
async function describeServiceData(file: string, detailBodyFile: string) {
  const storage = await openSqliteStorage({ path: file })
  try {
    const service = await createBeneficiaryService({ storage, limits: UNLIMITED })
    const provisioned = await service.clients.create({ name: 'bench', scopes: ['read', 'write'] })
    const client = {
      client_id: provisioned.client_id,
      client_secret: provisioned.client_secret,
    }
    const { value: tokens } = await service.login({ ip: '127.0.0.1' }, client)
    const db = storage.database
    const { maxId } = db.prepare('SELECT MAX(id) AS maxId FROM beneficiaries').get() as {
      maxId: number
    }

    // The limit answers with a real detail of median size.
    const bodies: string[] = []
    for (let i = 1; i <= 101; i++) {
      const id = Math.max(1, Math.round((maxId * i) / 102))
      const { value } = await service.get({ token: tokens.access_token }, id)
      bodies.push(JSON.stringify(value))
    }
    bodies.sort((a, b) => Buffer.byteLength(a) - Buffer.byteLength(b))
    const detail = bodies[50]!
    writeFileSync(detailBodyFile, detail)

    const common = db
      .prepare(
        'SELECT last_name AS name FROM beneficiaries GROUP BY last_name ORDER BY COUNT(*) DESC LIMIT 1',
      )
      .get() as { name: string }
    const span = db
      .prepare('SELECT MIN(created_at) AS first, MAX(created_at) AS last FROM beneficiaries')
      .get() as { first: number; last: number }
    db.pragma('wal_checkpoint(TRUNCATE)')
    return {
      maxId,
      ...searchAndMonth(common.name, span.first, span.last),
      detailBytes: Buffer.byteLength(detail),
      client,
    }
  } finally {
    await storage.close()
  }
}

/** The peer's database: its own schema, the same rows, one client. */
function buildPeerDatabase(repoRoot: string, serviceDb: string, peerDb: string) {
  const secret = randomBytes(32).toString('base64url')
  const db = new Database(peerDb)
  try {
    db.pragma('journal_mode = WAL')
    db.exec(readFileSync(join(repoRoot, 'bench', 'peer', 'schema.sql'), 'utf8'))
    db.prepare('ATTACH DATABASE ? AS src').run(serviceDb)
    const iso = (column: string) =>
      `strftime('%Y-%m-%dT%H:%M:%fZ', ${column} / 1000.0, 'unixepoch')`
    db.exec(`
      INSERT INTO beneficiaries
        (id, first_name, last_name, email, phone, date_of_birth, fiscal_code, address, status,
         metadata, created_at, updated_at)
      SELECT id, first_name, last_name, email, phone, date_of_birth, fiscal_code,
        CASE WHEN address_street IS NULL THEN NULL ELSE json_object(
          'street', address_street, 'city', address_city,
          'postal_code', address_postal_code, 'country', address_country) END,
        status, metadata, ${iso('created_at')}, ${iso('updated_at')}
      FROM src.beneficiaries ORDER BY id
    `)
    db.exec('DETACH DATABASE src')
    const hash = createHash('sha256').update(secret).digest('hex')
    db.prepare('INSERT INTO clients (id, secret_hash, scopes) VALUES (?, ?, ?)').run(
      'bench',
      hash,
      'read write',
    )
    db.pragma('wal_checkpoint(TRUNCATE)')
  } finally {
    db.close()
  }
  // What a fresh connection of the peer gets: better-sqlite3 builds with
  // SQLITE_DEFAULT_WAL_SYNCHRONOUS=1, so a WAL database opens with NORMAL.
  const probe = new Database(peerDb)
  const peerSynchronous = probe.pragma('synchronous', { simple: true }) as number
  probe.close()
  return { peerClient: { client_id: 'bench', client_secret: secret }, peerSynchronous }
}
