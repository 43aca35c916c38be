import pg from 'pg'

/** The server the PostgreSQL tests use (../shared/SERVICES.md), overridable by env. */
export const POSTGRES_URL =
  process.env['TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test'

/** Under CI a missing service fails the run; elsewhere its tests skip with one line. */
const UNDER_CI = process.env['CI'] === 'true'

/**
 * `false` when PostgreSQL answers at {@link POSTGRES_URL}; otherwise the one line a suite skips
 * with, saying how to run it. Under `CI=true` an absent PostgreSQL throws instead: CI never
 * skips these tests.
 */
export async function postgresSkip(): Promise<string | false> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3000 })
  try {
    await client.connect()
    await client.query('SELECT 1')
    return false
  } catch (error) {
    if (UNDER_CI) {
      throw new Error(`PostgreSQL does not answer at ${POSTGRES_URL} and CI=true`, {
        cause: error,
      })
    }
    return `PostgreSQL does not answer at ${POSTGRES_URL}: start it (../shared/SERVICES.md) or set TEST_DATABASE_URL`
  } finally {
    await client.end().catch(() => undefined)
  }
}

/** A database of its own for one test file: for suites that run the CLI, which takes a URL. */
export interface TestDatabase {
  /** Its connection string. */
  readonly url: string
  /** Drops it, ending its connections first. */
  drop(): Promise<void>
}

/** Creates an empty database named `<prefix>_<random>` on the test server. */
export async function createTestDatabase(prefix: string): Promise<TestDatabase> {
  const name = `${prefix}_${Math.random().toString(36).slice(2, 10)}`
  await admin(`CREATE DATABASE ${name}`)
  const url = new URL(POSTGRES_URL)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  }
}

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}
