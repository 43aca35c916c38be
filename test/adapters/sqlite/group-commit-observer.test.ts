import Database from 'better-sqlite3'
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { openSqliteStorage } from '../../../adapters/sqlite/index.js'
import { SqliteGroupCommit } from '../../../adapters/sqlite/writes/sqlite-group-commit.js'
import { ServerMetrics } from '../../../server/metrics/server-metrics.js'
import { insertBeneficiary, newBeneficiary } from '../../contracts/storage-fixtures.js'
import { parsePrometheusText, sampleValue } from '../../support/prometheus-text.js'

describe('group commits, observed (for metrics)', () => {
  it('tells the size of every group the storage commits: the writes of one turn of the event loop', async () => {
    const storage = await openSqliteStorage({ path: ':memory:' })
    const groups: [number, boolean][] = []
    storage.observeGroupCommits((size, committed) => groups.push([size, committed]))
    try {
      await Promise.all(
        ['a', 'b', 'c'].map((name) =>
          insertBeneficiary(storage, newBeneficiary({ email: `${name}@example.org` })),
        ),
      )
      await insertBeneficiary(storage, newBeneficiary({ email: 'd@example.org' }))
      assert.deepEqual(groups, [
        [3, true],
        [1, true],
      ])
    } finally {
      await storage.close()
    }
  })

  it('tells a group that failed as a whole, and a throwing listener harms no write', async () => {
    const db = new Database(':memory:')
    db.exec('CREATE TABLE log (text TEXT NOT NULL UNIQUE)')
    const insert = db.prepare('INSERT INTO log (text) VALUES (?)')
    const group = new SqliteGroupCommit(db)
    const groups: [number, boolean][] = []
    group.observe((size, committed) => groups.push([size, committed]))
    try {
      const failed = await Promise.allSettled([
        group.run(() => insert.run('first')),
        group.run(() => group.defer(() => void insert.run('first'))),
      ])
      assert.deepEqual(
        failed.map((outcome) => outcome.status),
        ['rejected', 'rejected'],
      )
      assert.deepEqual(groups, [[2, false]])

      group.observe(() => {
        throw new Error('an observer bug')
      })
      await group.run(() => insert.run('second'))
      assert.deepEqual(db.prepare('SELECT text FROM log').pluck().all(), ['second'])
    } finally {
      db.close()
    }
  })

  it('reaches the server metrics as a histogram of writes per group', async () => {
    const storage = await openSqliteStorage({ path: ':memory:' })
    const metrics = new ServerMetrics({ defaultMetrics: false })
    metrics.watchGroupCommits(storage)
    try {
      await Promise.all(
        ['a', 'b'].map((name) =>
          insertBeneficiary(storage, newBeneficiary({ email: `${name}@example.org` })),
        ),
      )
      await insertBeneficiary(storage, newBeneficiary({ email: 'c@example.org' }))
      const families = parsePrometheusText(await metrics.scrape())
      const name = 'beneficiary_sqlite_group_commit_writes'
      assert.equal(families.get(name)?.type, 'histogram')
      assert.equal(sampleValue(families, `${name}_count`), 2)
      assert.equal(sampleValue(families, `${name}_sum`), 3)
      assert.equal(sampleValue(families, `${name}_bucket`, { le: '1' }), 1)
      assert.equal(sampleValue(families, `${name}_bucket`, { le: '2' }), 2)
      assert.equal(sampleValue(families, 'beneficiary_sqlite_group_commit_failures_total'), 0)
    } finally {
      await storage.close()
    }
  })
})
