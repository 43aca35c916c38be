import Database from 'better-sqlite3'
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { GenerationLog } from '../../adapters/sqlite/sqlite-generation-log.js'

/** A write log as the migrations make it, its statistics taken while it held one row. */
function staleLog(): Database.Database {
  const db = new Database(':memory:')
  db.exec(`CREATE TABLE beneficiary_write_log
    ("generation" integer primary key autoincrement, "ids" text not null)`)
  db.exec("INSERT INTO beneficiary_write_log (ids) VALUES ('[1]')")
  db.exec('ANALYZE')
  const insert = db.prepare('INSERT INTO beneficiary_write_log (ids) VALUES (?)')
  for (let i = 2; i <= 3_000; i++) insert.run(JSON.stringify([i, i + 1]))
  return db
}

describe('GenerationLog', () => {
  it('reads the entries after a generation, in order, and the last generation', () => {
    const db = staleLog()
    const log = new GenerationLog(db, { table: 'beneficiary_write_log', column: 'ids' })
    assert.equal(log.latest(), 3_000)
    assert.deepEqual(log.since(2_997, 3_000), ['[2998,2999]', '[2999,3000]', '[3000,3001]'])
    assert.deepEqual(log.since(3_000, 3_000), [])
    assert.deepEqual(log.since(0, 2), ['[1]', '[2,3]'])
  })

  it('tells when the log no longer holds a generation asked for (pruned), and of none logged', () => {
    const db = staleLog()
    const log = new GenerationLog(db, { table: 'beneficiary_write_log', column: 'ids' })
    db.exec('DELETE FROM beneficiary_write_log WHERE generation <= 1000')
    assert.equal(log.since(999, 1_002), undefined)
    assert.deepEqual(log.since(1_000, 1_001), ['[1001,1002]'])
    db.exec('DELETE FROM beneficiary_write_log')
    assert.equal(log.latest(), 0)
  })

  it('looks each generation up by key even where the statistics say the log holds one row', () => {
    const db = staleLog()
    const prepared: string[] = []
    const watched = new Proxy(db, {
      get(target, property) {
        if (property !== 'prepare') return Reflect.get(target, property, target) as unknown
        return (sql: string) => {
          prepared.push(sql)
          return target.prepare(sql)
        }
      },
    })
    new GenerationLog(watched, { table: 'beneficiary_write_log', column: 'ids' })
    assert.equal(prepared.length, 2)
    // The range these replace: planned as a scan of every row kept, under these statistics.
    const range = 'SELECT ids FROM beneficiary_write_log WHERE generation > ? ORDER BY generation'
    for (const sql of [range, ...prepared]) {
      const parameters: number[] = sql.includes('?') ? [1] : []
      const plan = (
        db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...parameters) as { detail: string }[]
      )
        .map((row) => row.detail)
        .join('; ')
      if (sql === range)
        assert.match(plan, /^SCAN beneficiary_write_log/, 'the statistics are stale')
      else assert.doesNotMatch(plan, /\bSCAN\b/, `${sql}: ${plan}`)
    }
  })
})
