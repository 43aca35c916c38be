import { randomBytes } from 'node:crypto'
import { after, before } from 'node:test'
import pg from 'pg'
import { redactedUrl } from '../../server/cli/redacted-url.js'

/**
 * The database the tests use: `TEST_DATABASE_URL`, or the one every machine of the project
 * runs (../shared/SERVICES.md). Each test file works in a schema of its own.
 */
export const TEST_DATABASE_URL =
  process.env['TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test'

/**
 * How to run the tests that need PostgreSQL when it does not answer: the one line a skipped
 * file prints.
 */
const HOW_TO_RUN =
  'start it (pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start) or set TEST_DATABASE_URL'

let probe: Promise<string | undefined> | undefined

/**
 * Why the tests that need PostgreSQL must skip, or `undefined` when it answers. Asked once per
 * process. Under `CI=true` a database that does not answer is a failure, never a skip: the
 * promise rejects, and so does the import of the test file that awaits it.
 */
export function postgresSkipReason(): Promise<string | undefined> {
  probe ??= (async () => {
    const client = new pg.Client({
      connectionString: TEST_DATABASE_URL,
      connectionTimeoutMillis: 3000,
    })
    client.on('error', () => undefined)
    try {
      await client.connect()
      await client.query('SELECT 1')
      return undefined
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error)
      const where = redactedUrl(TEST_DATABASE_URL, 'TEST_DATABASE_URL')
      if (process.env['CI'] === 'true') {
        throw new Error(`PostgreSQL at ${where} does not answer, and CI=true: ${detail}`)
      }
      return `PostgreSQL at ${where} does not answer (${detail}): ${HOW_TO_RUN}`
    } finally {
      await client.end().catch(() => undefined)
    }
  })()
  return probe
}

/** A fresh schema name for one test file: `t_<label>_<random>`. */
export function testSchemaName(label: string): string {
  const safe = label
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_')
    .slice(0, 30)
  return `t_${safe}_${randomBytes(6).toString('hex')}`
}

/** A schema of one test file's own, and a pool to reach it. */
export interface TestSchema {
  /** The schema's name, for `openPostgresStorage({ schema })`. */
  readonly schema: string
  /** A pool of the file's (ended in `after`). Valid from `before` on. */
  readonly pool: () => pg.Pool
  /** A new pool to the same database, ended in `after` too: for a second "process". */
  readonly newPool: (max?: number) => pg.Pool
}

/**
 * Registers `before` and `after` hooks that give the enclosing suite a schema of its own,
 * created empty and dropped with everything in it afterwards, so that test files running in
 * parallel never see each other's rows.
 */
export function useTestSchema(label: string): TestSchema {
  const schema = testSchemaName(label)
  const pools: pg.Pool[] = []
  let main: pg.Pool | undefined
  const newPool = (max = 10): pg.Pool => {
    const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max })
    pool.on('error', () => undefined)
    pools.push(pool)
    return pool
  }
  before(async () => {
    main = newPool()
    await main.query(`CREATE SCHEMA "${schema}"`)
  })
  after(async () => {
    await main?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
    await Promise.all(pools.map((pool) => pool.end()))
  })
  return {
    schema,
    pool: () => {
      if (main === undefined) throw new Error('the schema exists only from before() on')
      return main
    },
    newPool,
  }
}
