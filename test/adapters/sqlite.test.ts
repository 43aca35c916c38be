import Database from 'better-sqlite3'
import assert from 'node:assert/strict'
import { chmod, mkdtemp, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { describe, it } from 'node:test'
import {
  SqliteStorage,
  applySqlitePragmas,
  backupSqlite,
  migrateSqlite,
  openSqliteStorage,
} from '../../adapters/sqlite/index.js'
import { isDomainError } from '../../core/errors.js'
import type { Storage } from '../../core/ports/storage.js'
import { searchTerms } from '../../core/search-terms.js'
import { describeStorageContract } from '../contracts/storage.contract.js'
import {
  T0,
  claim,
  clientRecord,
  createdEntry,
  createdRecord,
  fullBeneficiary,
  historyEntry,
  insertBeneficiary,
  isFiscalCodeConflict,
  listQuery,
  newBeneficiary,
  sessionRecord,
  summaryOf,
} from '../contracts/storage-fixtures.js'

function sqliteStorage(storage: Storage): SqliteStorage {
  assert.ok(storage instanceof SqliteStorage)
  return storage
}

const directories = new WeakMap<Storage, string>()

/** The contract on a file, its writes inline or on the writer thread. */
for (const writer of ['inline', 'thread'] as const) {
  describeStorageContract({
    name: writer === 'inline' ? 'sqlite (file)' : 'sqlite (file, writer thread)',
    create: async () => {
      const directory = await mkdtemp(join(tmpdir(), 'sqlite-contract-'))
      const storage = await openSqliteStorage({ path: join(directory, 'contract.db'), writer })
      directories.set(storage, directory)
      return storage
    },
    destroy: async (storage) => {
      await storage.close()
      const directory = directories.get(storage)
      if (directory !== undefined) await rm(directory, { recursive: true, force: true })
    },
    retainedHistory: (storage, id) => sqliteStorage(storage).beneficiaries.retainedHistory(id),
  })
}

describeStorageContract({
  name: 'sqlite (:memory:)',
  create: () => openSqliteStorage({ path: ':memory:' }),
  destroy: (storage) => storage.close(),
  retainedHistory: (storage, id) => sqliteStorage(storage).beneficiaries.retainedHistory(id),
})

/** A fresh temporary directory for one test, removed by `cleanUp`. */
async function temporaryDirectory(): Promise<{ path: string; cleanUp: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), 'sqlite-test-'))
  return { path, cleanUp: () => rm(path, { recursive: true, force: true }) }
}

describe('SqliteStorage beyond the contract', () => {
  it('sets WAL, synchronous=FULL, a 5 s busy timeout and foreign keys on a file database', async () => {
    const directory = await temporaryDirectory()
    const storage = await openSqliteStorage({ path: join(directory.path, 'pragmas.db') })
    try {
      const db = storage.database
      assert.equal(db.pragma('journal_mode', { simple: true }), 'wal')
      assert.equal(db.pragma('synchronous', { simple: true }), 2)
      assert.equal(db.pragma('busy_timeout', { simple: true }), 5000)
      assert.equal(db.pragma('foreign_keys', { simple: true }), 1)
    } finally {
      await storage.close()
      await directory.cleanUp()
    }
  })

  it('lowers synchronous to NORMAL and sets the busy timeout when asked', async () => {
    const directory = await temporaryDirectory()
    const storage = await openSqliteStorage({
      path: join(directory.path, 'normal.db'),
      synchronous: 'NORMAL',
      busyTimeoutMs: 1234,
    })
    try {
      assert.equal(storage.database.pragma('synchronous', { simple: true }), 1)
      assert.equal(storage.database.pragma('busy_timeout', { simple: true }), 1234)
    } finally {
      await storage.close()
      await directory.cleanUp()
    }
  })

  it('refuses invalid options with a TypeError', async () => {
    await assert.rejects(openSqliteStorage({ path: ':memory:', busyTimeoutMs: -1 }), TypeError)
    await assert.rejects(openSqliteStorage({ path: ':memory:', cacheSizeKib: 1.5 }), TypeError)
    await assert.rejects(openSqliteStorage({ path: '' }), TypeError)
  })

  it('never hands out an id twice, even after the highest one is deleted', async () => {
    const storage = await openSqliteStorage({ path: ':memory:' })
    try {
      await insertBeneficiary(storage)
      const second = await insertBeneficiary(storage)
      await storage.beneficiaries.remove(second.id, undefined, historyEntry('deleted', T0))
      assert.equal((await insertBeneficiary(storage)).id, second.id + 1)
    } finally {
      await storage.close()
    }
  })

  it('enforces fiscal-code uniqueness in the database itself, allowing many nulls (D8)', async () => {
    const storage = await openSqliteStorage({ path: ':memory:' })
    try {
      await insertBeneficiary(storage, fullBeneficiary())
      await insertBeneficiary(storage)
      await insertBeneficiary(storage)
      const insert = storage.database.prepare(
        `INSERT INTO beneficiaries (first_name, last_name, email, metadata, status, created_at,
           updated_at, version, sort_first, sort_last, fiscal_code)
         VALUES ('a', 'b', 'c', '{}', 'pending', 0, 0, 1, 'a', 'b', ?)`,
      )
      assert.throws(() => insert.run(fullBeneficiary().fiscal_code), {
        code: 'SQLITE_CONSTRAINT_UNIQUE',
      })
      assert.equal((await storage.beneficiaries.list(listQuery())).total, 3)
    } finally {
      await storage.close()
    }
  })

  it('enforces one Idempotency-Key per client in the database itself (D22)', async () => {
    const storage = await openSqliteStorage({ path: ':memory:' })
    try {
      const record = newBeneficiary()
      await storage.beneficiaries.create(record, createdEntry(record), claim())
      assert.throws(
        () =>
          storage.database
            .prepare(
              `INSERT INTO idempotency_keys
                 (client_id, key, fingerprint, beneficiary_id, created_at, expires_at)
               VALUES (?, ?, 'other', 1, 0, 0)`,
            )
            .run(claim().clientId, claim().key),
        { code: 'SQLITE_CONSTRAINT_UNIQUE' },
      )
    } finally {
      await storage.close()
    }
  })

  it('round-trips Unicode exactly: combining marks, emoji, right-to-left text', async () => {
    const storage = await openSqliteStorage({ path: ':memory:' })
    try {
      const record = fullBeneficiary({
        first_name: 'Zoe\u0308 👩🏽‍🔬',
        last_name: 'שָׁלוֹם عبد الله 𝒜',
        email: 'zoë@example.org',
        address: {
          street: 'Phố Hàng Bạc ١٢',
          city: 'Hà Nội',
          postal_code: '100000',
          country: 'VN',
        },
        metadata: { 'note 🗒': 'ﷺ \u200f RTL mark', count: -0.5, ok: false },
        fiscal_code: null,
      })
      const entry = historyEntry('created', T0, [{ field: 'first_name', old: null, new: '👩🏽‍🔬' }])
      const created = createdRecord(await storage.beneficiaries.create(record, entry))
      assert.deepEqual(await storage.beneficiaries.get(created.id), created)
      assert.deepEqual(created, { ...record, id: created.id, version: 1 })
      assert.deepEqual((await storage.beneficiaries.list(listQuery())).items, [summaryOf(created)])
      assert.deepEqual((await storage.beneficiaries.history(created.id, 0, 10))?.items, [entry])
      const found = await storage.beneficiaries.list(listQuery({ search: searchTerms('zoë 𝒜') }))
      assert.deepEqual(
        found.items.map((item) => item.id),
        [created.id],
      )
    } finally {
      await storage.close()
    }
  })

  it('never throws on hostile search terms, whether or not they went through searchTerms() (D16)', async () => {
    const storage = await openSqliteStorage({ path: ':memory:' })
    try {
      await insertBeneficiary(storage, newBeneficiary({ first_name: 'Anna', last_name: 'Near' }))
      const hostile = [
        '"',
        '""',
        '*',
        'NEAR',
        'NEAR(a b)',
        'AND',
        'OR',
        'NOT',
        '%',
        '_',
        "'; DROP TABLE beneficiaries; --",
        'words : a',
        '^a',
        '(',
        ')',
        '{words}',
        '\\',
        '\u0000',
        'a'.repeat(10_000),
        '😀',
        'שלום',
        'e\u0301',
        '\ud800',
      ]
      for (const text of hostile) {
        for (const search of [[text], searchTerms(text), [text, 'anna']]) {
          await assert.doesNotReject(
            storage.beneficiaries.list(listQuery({ search })),
            `search ${JSON.stringify(search).slice(0, 40)}`,
          )
        }
      }
      const many = Array.from({ length: 2_000 }, (_, i) => `w${i}`)
      assert.equal((await storage.beneficiaries.list(listQuery({ search: many }))).total, 0)
      const near = await storage.beneficiaries.list(listQuery({ search: searchTerms('NEAR') }))
      assert.equal(near.total, 1)
      assert.equal((await storage.beneficiaries.list(listQuery())).total, 1)
    } finally {
      await storage.close()
    }
  })

  it('backs up a database in use into a file that opens with the same rows', async () => {
    const directory = await temporaryDirectory()
    const storage = await openSqliteStorage({ path: join(directory.path, 'live.db') })
    try {
      const first = await insertBeneficiary(storage, fullBeneficiary())
      await insertBeneficiary(storage)
      await storage.clients.insert(clientRecord())
      const copyPath = join(directory.path, 'copy.db')
      assert.ok((await backupSqlite(storage, copyPath)) > 0)
      await insertBeneficiary(storage)

      const copy = await openSqliteStorage({ path: copyPath })
      try {
        assert.deepEqual(await copy.beneficiaries.get(first.id), first)
        assert.equal((await copy.beneficiaries.list(listQuery())).total, 2)
        assert.deepEqual(await copy.clients.list(), await storage.clients.list())
        assert.equal(copy.database.pragma('integrity_check', { simple: true }), 'ok')
      } finally {
        await copy.close()
      }
    } finally {
      await storage.close()
      await directory.cleanUp()
    }
  })

  it('D32: creates the database and SQLite its side files 0600, whatever the umask; an existing file keeps its mode', async () => {
    const directory = await temporaryDirectory()
    const umask = process.umask(0o002)
    try {
      const path = join(directory.path, 'private.db')
      const storage = await openSqliteStorage({ path })
      await insertBeneficiary(storage)
      for (const file of [path, `${path}-wal`, `${path}-shm`]) {
        assert.equal((await stat(file)).mode & 0o777, 0o600, file)
      }
      await storage.close()
      const shared = join(directory.path, 'shared.db')
      await writeFile(shared, '', { mode: 0o640 })
      await chmod(shared, 0o640)
      await (await openSqliteStorage({ path: shared })).close()
      assert.equal((await stat(shared)).mode & 0o777, 0o640)
    } finally {
      process.umask(umask)
      await directory.cleanUp()
    }
  })

  it('D32: a backup is 0600, also over an existing file that was not', async () => {
    const directory = await temporaryDirectory()
    const umask = process.umask(0o002)
    const storage = await openSqliteStorage({ path: join(directory.path, 'live.db') })
    try {
      await insertBeneficiary(storage)
      const fresh = join(directory.path, 'fresh-copy.db')
      await backupSqlite(storage, fresh)
      assert.equal((await stat(fresh)).mode & 0o777, 0o600)
      const existing = join(directory.path, 'old-copy.db')
      await backupSqlite(storage, existing)
      await chmod(existing, 0o644)
      await backupSqlite(storage, existing)
      assert.equal((await stat(existing)).mode & 0o777, 0o600)
    } finally {
      process.umask(umask)
      await storage.close()
      await directory.cleanUp()
    }
  })

  it('backs up from a bare connection too', async () => {
    const directory = await temporaryDirectory()
    const db = new Database(':memory:')
    try {
      await migrateSqlite(db)
      const storage = new SqliteStorage(db)
      await insertBeneficiary(storage)
      const copyPath = join(directory.path, 'copy.db')
      await backupSqlite(db, copyPath)
      const copy = await openSqliteStorage({ path: copyPath })
      assert.equal((await copy.beneficiaries.list(listQuery())).total, 1)
      await copy.close()
    } finally {
      db.close()
      await directory.cleanUp()
    }
  })

  it('leaves a connection it was given open when closed, and refuses an unmigrated one', async () => {
    const db = new Database(':memory:')
    try {
      assert.throws(() => new SqliteStorage(db), TypeError)
      applySqlitePragmas(db)
      await migrateSqlite(db)
      const storage = new SqliteStorage(db)
      await insertBeneficiary(storage)
      await storage.close()
      assert.equal(db.open, true)
      assert.equal(db.prepare('SELECT count(*) AS n FROM beneficiaries').get()?.constructor, Object)
    } finally {
      db.close()
    }
  })

  it('rejects every call, ping included, once closed; closing twice is harmless', async () => {
    const storage = await openSqliteStorage({ path: ':memory:' })
    await storage.close()
    await storage.close()
    const closed = (error: unknown) => error instanceof Error && !isDomainError(error)
    await assert.rejects(storage.ping(), closed)
    await assert.rejects(storage.beneficiaries.get(1), closed)
    await assert.rejects(storage.beneficiaries.list(listQuery()), closed)
    await assert.rejects(storage.beneficiaries.retainedHistory(1), closed)
    await assert.rejects(storage.clients.list(), closed)
    await assert.rejects(storage.sessions.isTokenActive('session-1', 'jti-1', 'client-1'), closed)
    await assert.rejects(storage.signingKeys.list(), closed)
  })

  it('refuses a session whose client does not exist (a foreign key)', async () => {
    const storage = await openSqliteStorage({ path: ':memory:' })
    try {
      await assert.rejects(
        storage.sessions.insert(sessionRecord({ client_id: 'client-unknown' })),
        {
          code: 'SQLITE_CONSTRAINT_FOREIGNKEY',
        },
      )
      assert.equal(
        await storage.sessions.findByRefreshTokenHash(sessionRecord().refresh_token_hash),
        undefined,
      )
    } finally {
      await storage.close()
    }
  })

  it('opens, reads and closes a file while another connection holds the write lock', async () => {
    const directory = await temporaryDirectory()
    const path = join(directory.path, 'locked.db')
    const writer = await openSqliteStorage({ path })
    try {
      for (let i = 0; i < 300; i++) await insertBeneficiary(writer)
      writer.database.exec('BEGIN IMMEDIATE')
      const reader = await openSqliteStorage({ path, busyTimeoutMs: 0 })
      assert.equal((await reader.beneficiaries.list(listQuery())).total, 300)
      await reader.close()
      writer.database.exec('COMMIT')
    } finally {
      if (writer.database.inTransaction) writer.database.exec('ROLLBACK')
      await writer.close()
      await directory.cleanUp()
    }
  })

  it('sees the writes of another connection to the same file', async () => {
    const directory = await temporaryDirectory()
    const path = join(directory.path, 'shared.db')
    const first = await openSqliteStorage({ path })
    const second = await openSqliteStorage({ path })
    try {
      const record = await insertBeneficiary(first, fullBeneficiary())
      assert.deepEqual(await second.beneficiaries.get(record.id), record)
      await assert.rejects(
        insertBeneficiary(second, fullBeneficiary({ email: 'other@example.org' })),
        isFiscalCodeConflict,
      )
      assert.equal((await second.beneficiaries.list(listQuery({ status: 'active' }))).total, 1)
    } finally {
      await first.close()
      await second.close()
      await directory.cleanUp()
    }
  })

  it('forgets remembered totals at once after its own writes, and from the next turn after another connection’s', async () => {
    const directory = await temporaryDirectory()
    const path = join(directory.path, 'totals.db')
    const server = await openSqliteStorage({ path })
    const cli = await openSqliteStorage({ path })
    const total = async (storage: Storage, search?: readonly string[]) =>
      (await storage.beneficiaries.list(listQuery(search === undefined ? {} : { search }))).total
    try {
      await insertBeneficiary(server, fullBeneficiary())
      assert.equal(await total(server), 1)
      assert.equal(await total(server, searchTerms('bia')), 1)
      await insertBeneficiary(
        server,
        fullBeneficiary({ email: 'b@example.org', fiscal_code: null }),
      )
      // Same turn, same connection: the write is counted at once.
      assert.equal(await total(server), 2)
      assert.equal(await total(server, searchTerms('bia')), 2)

      await nextTurn()
      assert.equal(await total(server), 2)
      await insertBeneficiary(cli, fullBeneficiary({ email: 'c@example.org', fiscal_code: null }))
      await nextTurn()
      assert.equal(await total(server), 3)
      assert.equal(await total(server, searchTerms('bia')), 3)
    } finally {
      await server.close()
      await cli.close()
      await directory.cleanUp()
    }
  })

  it('D1, D5: a revocation by another connection wins over the memo of active tokens from the next turn of the event loop', async () => {
    const directory = await temporaryDirectory()
    const path = join(directory.path, 'revoke.db')
    const server = await openSqliteStorage({ path })
    const cli = await openSqliteStorage({ path })
    try {
      await server.clients.insert(clientRecord())
      await server.sessions.insert(sessionRecord())
      await server.sessions.insert(sessionRecord({ id: 'session-2', refresh_token_hash: 'h2' }))
      assert.equal(await server.sessions.isTokenActive('session-1', 'jti-1', 'client-1'), true)
      assert.equal(await server.sessions.isTokenActive('session-1', 'jti-1', 'client-1'), true)
      await cli.sessions.revoke('session-1', T0, { jti: 'jti-1', expiresAt: T0 + 3_600_000 })
      // The memo reads `data_version` once per turn: requests read after the revocation see it.
      await nextTurn()
      assert.equal(await server.sessions.isTokenActive('session-1', 'jti-1', 'client-1'), false)

      assert.equal(await server.sessions.isTokenActive('session-2', 'jti-2', 'client-1'), true)
      assert.equal(await cli.clients.revoke('client-1', T0), true)
      await nextTurn()
      assert.equal(await server.sessions.isTokenActive('session-2', 'jti-2', 'client-1'), false)
    } finally {
      await server.close()
      await cli.close()
      await directory.cleanUp()
    }
  })

  it('D1: a revocation through the same connection wins over the memo too', async () => {
    const storage = await openSqliteStorage({ path: ':memory:' })
    try {
      await storage.clients.insert(clientRecord())
      await storage.sessions.insert(sessionRecord())
      assert.equal(await storage.sessions.isTokenActive('session-1', 'jti-1', 'client-1'), true)
      await storage.clients.revoke('client-1', T0)
      assert.equal(await storage.sessions.isTokenActive('session-1', 'jti-1', 'client-1'), false)
    } finally {
      await storage.close()
    }
  })

  it('commits the writes of one event-loop turn together, a failing one rolling back alone', async () => {
    const directory = await temporaryDirectory()
    const storage = await openSqliteStorage({ path: join(directory.path, 'group.db') })
    try {
      const results = await Promise.allSettled([
        insertBeneficiary(storage, fullBeneficiary()),
        insertBeneficiary(storage, newBeneficiary({ email: 'a@example.org' })),
        // The same fiscal code again: this write fails, the others must not.
        insertBeneficiary(storage, fullBeneficiary({ email: 'b@example.org' })),
        insertBeneficiary(storage, newBeneficiary({ email: 'c@example.org' })),
      ])
      assert.deepEqual(
        results.map((r) => r.status),
        ['fulfilled', 'fulfilled', 'rejected', 'fulfilled'],
      )
      assert.ok(isFiscalCodeConflict((results[2] as PromiseRejectedResult).reason))
      const { items, total } = await storage.beneficiaries.list(listQuery())
      assert.equal(total, 3)
      assert.deepEqual(
        items.map((b) => b.email),
        ['Giulia.Bianchi@Example.org', 'a@example.org', 'c@example.org'],
      )
    } finally {
      await storage.close()
      await directory.cleanUp()
    }
  })

  it('commits writes still waiting for their group when the storage closes', async () => {
    const directory = await temporaryDirectory()
    const path = join(directory.path, 'closing.db')
    const storage = await openSqliteStorage({ path })
    const pending = insertBeneficiary(storage)
    await storage.close()
    await pending
    const reopened = await openSqliteStorage({ path })
    try {
      assert.equal((await reopened.beneficiaries.list(listQuery())).total, 1)
    } finally {
      await reopened.close()
      await directory.cleanUp()
    }
  })

  it('D16, D18: remembered totals follow writes from this connection and from another one', async () => {
    const directory = await temporaryDirectory()
    const path = join(directory.path, 'totals.db')
    const server = await openSqliteStorage({ path })
    const other = await openSqliteStorage({ path })
    const rossi = listQuery({ search: ['ross'] })
    try {
      await insertBeneficiary(server, newBeneficiary())
      assert.equal((await server.beneficiaries.list(rossi)).total, 1)
      assert.equal((await server.beneficiaries.list(rossi)).total, 1)
      await insertBeneficiary(server, newBeneficiary({ email: 'second@example.org' }))
      assert.equal((await server.beneficiaries.list(rossi)).total, 2)
      const dated = listQuery({ createdFrom: T0 - 86_400_000, createdBefore: T0 + 86_400_000 })
      assert.equal((await server.beneficiaries.list(dated)).total, 2)
      await insertBeneficiary(other, newBeneficiary({ email: 'third@example.org' }))
      assert.equal((await server.beneficiaries.list(rossi)).total, 3)
      assert.equal((await server.beneficiaries.list(dated)).total, 3)
      const [first] = (await server.beneficiaries.list(rossi)).items
      await other.beneficiaries.remove(first!.id, undefined, historyEntry('deleted', T0, []))
      assert.equal((await server.beneficiaries.list(rossi)).total, 2)
    } finally {
      await server.close()
      await other.close()
      await directory.cleanUp()
    }
  })
})
