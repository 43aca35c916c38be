import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  openPostgresStorage,
  PostgresStorage,
  type PostgresPool,
} from '../../../adapters/postgres/index.js'
import { ServerMetrics } from '../../../server/metrics/server-metrics.js'
import { parsePrometheusText, sampleValue } from '../../support/prometheus-text.js'
import { postgresSkipReason, TEST_DATABASE_URL, useTestSchema } from '../../support/postgres.js'

const skip = (await postgresSkipReason()) ?? false

describe('the PostgreSQL pool, observed (for metrics)', { skip }, () => {
  const test = useTestSchema('pool_usage')

  it('tells the connections in use, idle and the requests waiting, and the metrics show them', async () => {
    const storage = await openPostgresStorage({
      connectionString: TEST_DATABASE_URL,
      schema: test.schema,
      poolSize: 2,
    })
    const metrics = new ServerMetrics({ defaultMetrics: false })
    metrics.watchPool(() => storage.poolUsage())
    const held = [await storage.pool.connect(), await storage.pool.connect()]
    try {
      assert.deepEqual(storage.poolUsage(), { total: 2, idle: 0, waiting: 0 })
      // Both connections are held: this ping waits for one.
      const ping = storage.ping()
      await new Promise((resolve) => setImmediate(resolve))
      assert.deepEqual(storage.poolUsage(), { total: 2, idle: 0, waiting: 1 })
      let families = parsePrometheusText(await metrics.scrape())
      const connections = 'beneficiary_postgres_pool_connections'
      assert.equal(families.get(connections)?.type, 'gauge')
      assert.equal(sampleValue(families, connections, { state: 'in_use' }), 2)
      assert.equal(sampleValue(families, connections, { state: 'idle' }), 0)
      assert.equal(sampleValue(families, 'beneficiary_postgres_pool_waiting'), 1)

      for (const client of held.splice(0)) client.release()
      await ping
      assert.deepEqual(storage.poolUsage(), { total: 2, idle: 2, waiting: 0 })
      families = parsePrometheusText(await metrics.scrape())
      assert.equal(sampleValue(families, connections, { state: 'in_use' }), 0)
      assert.equal(sampleValue(families, connections, { state: 'idle' }), 2)
      assert.equal(sampleValue(families, 'beneficiary_postgres_pool_waiting'), 0)
    } finally {
      for (const client of held) client.release()
      await storage.close()
    }
  })

  it('tells nothing of a pool that keeps no counts, and the metrics leave its gauges empty', async () => {
    const pool: PostgresPool = {
      query: () => Promise.resolve({ rows: [], rowCount: 0 }),
      connect: () => Promise.reject(new Error('not used')),
      end: () => Promise.resolve(),
    }
    const storage = new PostgresStorage(pool, {
      schema: test.schema,
      ownsPool: false,
      migrationsApplied: [],
    })
    assert.equal(storage.poolUsage(), undefined)
    const metrics = new ServerMetrics({ defaultMetrics: false })
    metrics.watchPool(() => storage.poolUsage())
    const families = parsePrometheusText(await metrics.scrape())
    assert.deepEqual(families.get('beneficiary_postgres_pool_connections')?.samples, [])
  })
})
