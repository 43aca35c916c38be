import Database from 'better-sqlite3'
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { openSqliteStorage } from '../../../adapters/sqlite/index.js'
import { SqliteGroupCommit } from '../../../adapters/sqlite/writes/sqlite-group-commit.js'
import { searchTerms } from '../../../core/search-terms.js'
import {
  createdEntry,
  fullBeneficiary,
  historyEntry,
  insertBeneficiary,
  isFiscalCodeConflict,
  listQuery,
  newBeneficiary,
  nextVersion,
} from '../../contracts/storage-fixtures.js'

function scratchDatabase(): {
  db: Database.Database
  log: (text: string) => void
  logged: () => string[]
} {
  const db = new Database(':memory:')
  db.exec('CREATE TABLE log (seq INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE)')
  const insert = db.prepare('INSERT INTO log (text) VALUES (?)')
  const select = db.prepare<[], string>('SELECT text FROM log ORDER BY seq').pluck()
  return { db, log: (text) => void insert.run(text), logged: () => select.all() }
}

describe('SqliteGroupCommit.defer', () => {
  it('runs deferred statements after every write of the group, in order, inside its transaction', async () => {
    const { db, log, logged } = scratchDatabase()
    const group = new SqliteGroupCommit(db)
    const inTransaction: boolean[] = []
    try {
      await Promise.all([
        group.run(() => {
          log('write 1')
          group.defer(() => {
            inTransaction.push(db.inTransaction)
            log('deferred by 1')
          })
        }),
        group.run(() => {
          log('write 2')
          group.defer(() => log('deferred by 2'))
        }),
      ])
      assert.deepEqual(logged(), ['write 1', 'write 2', 'deferred by 1', 'deferred by 2'])
      assert.deepEqual(inTransaction, [true])
    } finally {
      db.close()
    }
  })

  it('drops what a failing write deferred, with its savepoint, and keeps the others', async () => {
    const { db, log, logged } = scratchDatabase()
    const group = new SqliteGroupCommit(db)
    try {
      const outcomes = await Promise.allSettled([
        group.run(() => {
          log('kept')
          group.defer(() => log('deferred by kept'))
        }),
        // In a savepoint, as the store's writes are (better-sqlite3's nested transaction).
        group.run(
          db.transaction(() => {
            log('failing')
            group.defer(() => log('deferred by failing'))
            log('kept') // UNIQUE: this write fails after deferring
          }),
        ),
      ])
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['fulfilled', 'rejected'],
      )
      assert.deepEqual(logged(), ['kept', 'deferred by kept'])
    } finally {
      db.close()
    }
  })

  it('fails the whole group, committing nothing, when a deferred statement fails', async () => {
    const { db, log, logged } = scratchDatabase()
    const group = new SqliteGroupCommit(db)
    try {
      const outcomes = await Promise.allSettled([
        group.run(() => log('first')),
        group.run(() => {
          log('second')
          group.defer(() => log('first'))
        }),
      ])
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['rejected', 'rejected'],
      )
      assert.deepEqual(logged(), [])
      assert.equal(db.inTransaction, false)
      await group.run(() => log('next group'))
      assert.deepEqual(logged(), ['next group'], 'the next group starts clean')
    } finally {
      db.close()
    }
  })

  it('refuses a deferral outside a write of a group', () => {
    const db = new Database(':memory:')
    try {
      assert.throws(() => new SqliteGroupCommit(db).defer(() => {}), TypeError)
    } finally {
      db.close()
    }
  })
})

describe('SqliteGroupCommit.finishEach', () => {
  it('finishes each group once, after its deferred statements and before COMMIT', async () => {
    const { db, log, logged } = scratchDatabase()
    const group = new SqliteGroupCommit(db)
    let groups = 0
    group.finishEach({
      finish: () => {
        groups += 1
        log(`finish ${groups} (in transaction: ${db.inTransaction})`)
      },
      discard: () => assert.fail('no group failed'),
    })
    try {
      await Promise.all([
        group.run(() => group.defer(() => log('deferred 1'))),
        group.run(() => group.defer(() => log('deferred 2'))),
      ])
      await group.run(() => log('second group'))
      assert.deepEqual(logged(), [
        'deferred 1',
        'deferred 2',
        'finish 1 (in transaction: true)',
        'second group',
        'finish 2 (in transaction: true)',
      ])
    } finally {
      db.close()
    }
  })

  it('discards when the group fails, and fails the group when finishing throws', async () => {
    const { db, log, logged } = scratchDatabase()
    const group = new SqliteGroupCommit(db)
    const calls: string[] = []
    let failFinish = false
    group.finishEach({
      finish: () => {
        calls.push('finish')
        if (failFinish) throw new Error('finishing failed')
      },
      discard: () => calls.push('discard'),
    })
    try {
      const failedDeferral = await Promise.allSettled([
        group.run(() => log('kept?')),
        group.run(() => group.defer(() => log('kept?'))),
      ])
      assert.deepEqual(
        failedDeferral.map((o) => o.status),
        ['rejected', 'rejected'],
      )
      assert.deepEqual(calls, ['discard'], 'a group that failed is not finished')
      failFinish = true
      const failedFinish = await Promise.allSettled([group.run(() => log('not kept'))])
      assert.equal(failedFinish[0]?.status, 'rejected')
      assert.deepEqual(calls, ['discard', 'finish', 'discard'])
      assert.deepEqual(logged(), [])
      assert.equal(db.inTransaction, false)
    } finally {
      db.close()
    }
  })
})

describe('search words written once per group (D16)', () => {
  it('indexes the writes of a group that succeed, and not the one that failed', async () => {
    const storage = await openSqliteStorage({ path: ':memory:' })
    const byName = (name: string) => listQuery({ search: searchTerms(name) })
    try {
      const renamed = await insertBeneficiary(storage, newBeneficiary({ last_name: 'Oldname' }))
      const removed = await insertBeneficiary(storage, newBeneficiary({ last_name: 'Gonzaga' }))
      const taken = fullBeneficiary({ last_name: 'Taken' })
      await insertBeneficiary(storage, taken)
      const duplicate = fullBeneficiary({ last_name: 'Duplicato', email: 'dup@example.org' })
      const next = nextVersion(renamed, { last_name: 'Newname' }, renamed.updated_at + 1)
      const fresh = newBeneficiary({ last_name: 'Fresco' })
      const outcomes = await Promise.allSettled([
        storage.beneficiaries.create(fresh, createdEntry(fresh)),
        storage.beneficiaries.create(duplicate, createdEntry(duplicate)),
        storage.beneficiaries.update(renamed, next, historyEntry('updated', next.updated_at)),
        storage.beneficiaries.remove(
          removed.id,
          removed.version,
          historyEntry('deleted', next.updated_at),
        ),
      ])
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
      )
      assert.ok(isFiscalCodeConflict((outcomes[1] as PromiseRejectedResult).reason))
      const totals = async (...names: string[]) =>
        Promise.all(
          names.map(async (name) => (await storage.beneficiaries.list(byName(name))).total),
        )
      assert.deepEqual(
        await totals('fresco', 'duplicato', 'newname', 'oldname', 'gonzaga'),
        [1, 0, 1, 0, 0],
      )
    } finally {
      await storage.close()
    }
  })
})
