import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import pg from 'pg'
import {
  openPostgresStorage,
  type PostgresPool,
  type PostgresPoolClient,
  type PostgresQueryConfig,
} from '../../adapters/postgres/index.js'
import { createBeneficiaryService } from '../../core/index.js'
import { startServer, type RunningServer } from '../../server/index.js'
import { MARIO } from '../server/server-fixtures.js'
import { createTestDatabase, type TestDatabase } from '../support/postgres-database.js'
import { postgresSkipReason, useTestSchema } from '../support/postgres.js'
import { assertUnavailable, call, createClient, login, type Reply } from './fault-support.js'
import { ServeChild } from './serve-child.js'

const skip = (await postgresSkipReason()) ?? false

/** The search word that makes a list run away. */
const RUNAWAY = 'runaway'

/**
 * The test's hook, which the product does not have: a pool whose statements that carry the
 * search word {@link RUNAWAY} become `SELECT pg_sleep(60)`, a list that would run for a minute
 * in PostgreSQL. Every other statement goes through as it is.
 */
class RunawayPool implements PostgresPool {
  readonly #pool: pg.Pool

  constructor(pool: pg.Pool) {
    this.#pool = pool
  }

  query(config: PostgresQueryConfig) {
    return this.#pool.query(slow(config) as pg.QueryConfig)
  }

  async connect(): Promise<PostgresPoolClient> {
    const client = await this.#pool.connect()
    return {
      query: ((config: PostgresQueryConfig | string, values?: unknown[]) =>
        typeof config === 'string'
          ? client.query(config, values)
          : client.query(slow(config) as pg.QueryConfig)) as PostgresPoolClient['query'],
      release: (error?: Error | boolean) => client.release(error),
    }
  }

  end(): Promise<void> {
    return this.#pool.end()
  }
}

function slow(config: PostgresQueryConfig): PostgresQueryConfig {
  const runaway = config.values?.some(
    (value) => typeof value === 'string' && value.includes(RUNAWAY),
  )
  return runaway ? { text: 'SELECT pg_sleep(60)' } : config
}

/** Polls `done` every 10 ms until it holds, for at most 20 s. */
async function eventually(done: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000
  while (!(await done())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`)
    await delay(10)
  }
}

describe('a list past its time budget on PostgreSQL', { skip }, () => {
  const database = useTestSchema('list_budget')
  let server: RunningServer | undefined
  let serve: ServeChild | undefined
  let other: TestDatabase | undefined
  const holders: pg.Client[] = []
  after(async () => {
    await server?.close()
    await serve?.kill()
    for (const holder of holders) await holder.end().catch(() => undefined)
    await other?.drop()
  })

  it('is cancelled by PostgreSQL and answered 503 with Retry-After, while the other requests get 200', async () => {
    // Three connections and no statement timeout of the pool's: only the list budget can stop
    // a runaway list, and three of them hold every connection.
    const inner = database.newPool(3)
    const storage = await openPostgresStorage({
      pool: new RunawayPool(inner),
      schema: database.schema,
      listTimeoutMs: 500,
    })
    const service = await createBeneficiaryService({
      storage,
      limits: { auth: 1000, write: 1000, standard: 1000 },
    })
    const errors: Record<string, unknown>[] = []
    server = await startServer({
      service,
      transport: 'node',
      port: 0,
      logger: { info: () => undefined, error: (fields) => void errors.push({ ...fields }) },
    })
    const base = server.url
    const client = await service.clients.create({ name: 'budget', scopes: ['read', 'write'] })
    const token = await login(base, client)
    const created = await call(base, 'POST', '/v3/beneficiaries', { token, body: MARIO })
    assert.equal(created.status, 201, created.body)
    const id = Number(created.json!['id'])

    // Three searches apart: lists with the same filters would wait for the first one's count.
    const runaways = ['a', 'b', 'c'].map((letter) =>
      call(base, 'GET', `/v3/beneficiaries?search=${RUNAWAY}${letter}`, { token }),
    )
    const sleeping = async () =>
      (
        await database
          .pool()
          .query<{ n: number }>(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(60)' AND state = 'active'",
          )
      ).rows[0]!.n
    await eventually(async () => (await sleeping()) === 3, 'three lists run away')

    // Every connection is held: these wait for one, and get it when the budget frees them.
    const paths = [
      '/v3/beneficiaries',
      '/v3/beneficiaries?search=ross',
      '/v3/beneficiaries?status=pending&sort=-last_name',
      `/v3/beneficiaries/${id}`,
      `/v3/beneficiaries/${id}/history`,
    ]
    const fast = await Promise.all(paths.map((path) => call(base, 'GET', path, { token })))
    for (const [i, reply] of fast.entries()) assert.equal(reply.status, 200, paths[i])
    assert.equal((fast[1]!.json!['meta'] as { total_count: number }).total_count, 1)

    for (const reply of await Promise.all(runaways)) {
      assertUnavailable(reply, 'GET', '/v3/beneficiaries')
      assert.equal(reply.headers['retry-after'], '1')
    }
    assert.equal(await sleeping(), 0, 'PostgreSQL stopped the lists itself')
    // query_canceled: statement_timeout, on the server; logged by its code, not its message.
    assert.equal(errors.length, 3)
    for (const line of errors) {
      assert.equal((line['err'] as { code?: string }).code, '57014')
      assert.doesNotMatch(JSON.stringify(line), new RegExp(`${RUNAWAY}|Rossi|Mario`, 'i'))
    }
    await server.close()
    server = undefined
    await storage.close()
  })

  it('takes its budget from serve --list-timeout (LIST_TIMEOUT_MS)', async () => {
    other = await createTestDatabase('list_budget_serve')
    const client = await createClient(other.url)
    serve = await ServeChild.start(other.url, { LIST_TIMEOUT_MS: '300' })
    const base = serve.url
    const token = await login(base, client)
    const created = await call(base, 'POST', '/v3/beneficiaries', { token, body: MARIO })
    assert.equal(created.status, 201, created.body)
    const id = Number(created.json!['id'])

    // Another session holds the counters, which every list reads and a get does not.
    const holder = new pg.Client({ connectionString: other.url })
    holders.push(holder)
    await holder.connect()
    await holder.query('BEGIN')
    await holder.query('LOCK TABLE beneficiary_counts IN ACCESS EXCLUSIVE MODE')
    const lists: Reply[] = await Promise.all(
      ['/v3/beneficiaries', '/v3/beneficiaries?status=pending'].map((path) =>
        call(base, 'GET', path, { token }),
      ),
    )
    for (const reply of lists) assertUnavailable(reply, 'GET', '/v3/beneficiaries')
    assert.equal((await call(base, 'GET', `/v3/beneficiaries/${id}`, { token })).status, 200)
    assert.equal((await call(base, 'GET', '/readyz')).status, 200)

    await holder.query('ROLLBACK')
    const page = await call(base, 'GET', '/v3/beneficiaries', { token })
    assert.equal(page.status, 200, page.body)
    assert.equal((page.json!['meta'] as { total_count: number }).total_count, 1)
  })
})
