import Database from 'better-sqlite3'
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, it } from 'node:test'
import { SqliteStorage, openSqliteStorage } from '../../../adapters/sqlite/index.js'
import { SqliteGroupCommit } from '../../../adapters/sqlite/writes/sqlite-group-commit.js'
import { translateStorageFailure } from '../../../adapters/sqlite/sqlite-query.js'
import { StorageUnavailableError, type StorageFailureReason } from '../../../core/errors.js'
import {
  clientRecord,
  createdEntry,
  listQuery,
  newBeneficiary,
  sessionRecord,
} from '../../contracts/storage-fixtures.js'

/** A better-sqlite3 error as the driver throws it: an Error with SQLite's code. */
function driverError(code: string): Error {
  return Object.assign(new Error(`${code}: from the driver`), { code })
}

/** Asserts that `error` is a `StorageUnavailableError` for `reason`, whose cause has `code`. */
function assertUnavailable(error: unknown, reason: StorageFailureReason, code: RegExp): true {
  assert.ok(error instanceof StorageUnavailableError, String(error))
  assert.equal(error.code, 'service_unavailable')
  assert.equal(error.reason, reason)
  assert.match(String((error.cause as { code?: unknown }).code), code)
  assert.doesNotMatch(error.message, /SQLITE|sqlite/)
  return true
}

describe('SQLite storage faults become StorageUnavailableError', () => {
  it('translates busy, full, read-only, I/O and cannot-open codes, extended ones too, and nothing else', () => {
    const cases: [string, StorageFailureReason][] = [
      ['SQLITE_BUSY', 'busy'],
      ['SQLITE_BUSY_SNAPSHOT', 'busy'],
      ['SQLITE_FULL', 'disk_full'],
      ['SQLITE_READONLY', 'read_only'],
      ['SQLITE_READONLY_DBMOVED', 'read_only'],
      ['SQLITE_IOERR', 'io_error'],
      ['SQLITE_IOERR_WRITE', 'io_error'],
      ['SQLITE_IOERR_FSYNC', 'io_error'],
      ['SQLITE_CANTOPEN', 'cannot_open'],
      ['SQLITE_CANTOPEN_ISDIR', 'cannot_open'],
    ]
    for (const [code, reason] of cases) {
      const cause = driverError(code)
      const translated = translateStorageFailure(cause)
      assertUnavailable(translated, reason, new RegExp(`^${code}$`))
      assert.equal((translated as StorageUnavailableError).cause, cause)
      assert.equal(
        (translated as StorageUnavailableError).retryAfterSeconds,
        reason === 'busy' ? 1 : 5,
      )
    }
    for (const untouched of [
      driverError('SQLITE_CONSTRAINT_UNIQUE'),
      driverError('SQLITE_CORRUPT'),
      driverError('SQLITE_BUSYNESS'),
      driverError('ENOSPC'),
      new Error('plain'),
      new StorageUnavailableError('busy'),
      undefined,
      null,
      'text',
    ]) {
      assert.equal(translateStorageFailure(untouched), untouched)
    }
  })

  describe('on a database file', () => {
    let directory = ''
    let path = ''

    beforeEach(async () => {
      directory = await mkdtemp(join(tmpdir(), 'sqlite-faults-'))
      path = join(directory, 'faults.db')
      await (await openSqliteStorage({ path })).close()
    })

    afterEach(async () => {
      await rm(directory, { recursive: true, force: true })
    })

    it('fails every write of a group whose COMMIT fails, and leaves none of them', async () => {
      // Rollback-journal mode, where COMMIT needs the exclusive lock a reader can deny.
      const db = new Database(path)
      db.pragma('journal_mode = DELETE')
      db.pragma('busy_timeout = 0')
      const storage = new SqliteStorage(db)
      const reader = new Database(path, { timeout: 0 })
      try {
        reader.exec('BEGIN')
        reader.prepare('SELECT count(*) FROM beneficiaries').get()
        const writes = [1, 2, 3].map((n) => {
          const record = newBeneficiary({ email: `group${n}@example.org` })
          return storage.beneficiaries.create(record, createdEntry(record))
        })
        const settled = await Promise.allSettled(writes)
        for (const outcome of settled) {
          assert.equal(outcome.status, 'rejected')
          assertUnavailable(outcome.reason, 'busy', /^SQLITE_BUSY/)
        }
        assert.equal(db.inTransaction, false, 'the group was rolled back')
        reader.exec('COMMIT')
        assert.equal((await storage.beneficiaries.list(listQuery())).total, 0)
        assert.equal(db.prepare('SELECT count(*) FROM beneficiary_history').pluck().get(), 0)
        const record = newBeneficiary({ email: 'after@example.org' })
        assert.equal(
          (await storage.beneficiaries.create(record, createdEntry(record))).kind,
          'created',
        )
      } finally {
        if (reader.inTransaction) reader.exec('ROLLBACK')
        reader.close()
        await storage.close()
        db.close()
      }
    })

    it('fails the whole group when SQLite rolls its transaction back under one write, and commits none of the others', async () => {
      // SQLite may roll back the whole transaction on SQLITE_FULL or SQLITE_IOERR: simulated
      // here by a write that rolls it back and throws the driver's error.
      const db = new Database(path)
      const group = new SqliteGroupCommit(db)
      const insert = db.prepare(
        'INSERT INTO signing_keys (kid, secret, created_at) VALUES (?, ?, 0)',
      )
      try {
        const first = group.run(() => insert.run('first', 'a'))
        const failing = group.run(() => {
          db.exec('ROLLBACK')
          throw driverError('SQLITE_FULL')
        })
        const third = group.run(() => insert.run('third', 'c'))
        for (const outcome of await Promise.allSettled([first, failing, third])) {
          assert.equal(outcome.status, 'rejected')
          assertUnavailable(outcome.reason, 'disk_full', /^SQLITE_FULL$/)
        }
        assert.deepEqual(
          db.prepare("SELECT kid FROM signing_keys WHERE kid IN ('first', 'third')").all(),
          [],
        )
      } finally {
        db.close()
      }
    })

    it('translates faults of statements outside the group commit: a read-only file refuses a login session', async () => {
      const db = new Database(path, { readonly: true })
      const storage = new SqliteStorage(db)
      try {
        await assert.rejects(storage.sessions.insert(sessionRecord()), (error) =>
          assertUnavailable(error, 'read_only', /^SQLITE_READONLY/),
        )
        const record = newBeneficiary()
        await assert.rejects(storage.beneficiaries.create(record, createdEntry(record)), (error) =>
          assertUnavailable(error, 'read_only', /^SQLITE_READONLY/),
        )
        assert.equal((await storage.beneficiaries.list(listQuery())).total, 0, 'reads still work')
      } finally {
        await storage.close()
        db.close()
      }
    })

    it('translates a lock held past the busy timeout when a logout revokes its session', async () => {
      const storage = await openSqliteStorage({ path, busyTimeoutMs: 0 })
      const holder = new Database(path, { timeout: 0 })
      try {
        await storage.clients.insert(clientRecord())
        await storage.sessions.insert(sessionRecord())
        holder.exec('BEGIN IMMEDIATE')
        await assert.rejects(storage.sessions.revoke(sessionRecord().id, 1), (error) =>
          assertUnavailable(error, 'busy', /^SQLITE_BUSY/),
        )
        holder.exec('ROLLBACK')
        await storage.sessions.revoke(sessionRecord().id, 1)
        assert.equal(
          (await storage.sessions.findByRefreshTokenHash(sessionRecord().refresh_token_hash))
            ?.revoked_at,
          1,
        )
      } finally {
        if (holder.inTransaction) holder.exec('ROLLBACK')
        holder.close()
        await storage.close()
      }
    })
  })
})
