import Database from 'better-sqlite3'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, it } from 'node:test'
import { openSqliteStorage } from '../../../adapters/sqlite/index.js'
import { SAFETY_NET_PAGES } from '../../../adapters/sqlite/threads/sqlite-checkpointer.js'
import { SqliteDataVersion } from '../../../adapters/sqlite/sqlite-data-version.js'
import { SqliteWriterThread } from '../../../adapters/sqlite/threads/sqlite-writer-thread.js'
import { StorageUnavailableError } from '../../../core/errors.js'
import { ServerMetrics } from '../../../server/metrics/server-metrics.js'
import {
  clientRecord,
  createdEntry,
  createdRecord,
  fullBeneficiary,
  historyEntry,
  insertBeneficiary,
  isFiscalCodeConflict,
  listQuery,
  newBeneficiary,
  nextVersion,
  sessionRecord,
} from '../../contracts/storage-fixtures.js'
import { parsePrometheusText, sampleValue } from '../../support/prometheus-text.js'

const STAND_INS = new URL('./', import.meta.url)

describe('SqliteWriterThread: writes on a thread of their own (writer: thread)', () => {
  let directory = ''
  let path = ''

  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'sqlite-writer-'))
    path = join(directory, 'writer.db')
  })

  afterEach(async () => {
    await rm(directory, { recursive: true, force: true })
  })

  it('gives the writer connection the settings of the storage: synchronous=FULL, WAL, busy timeout, checkpoints', async () => {
    const storage = await openSqliteStorage({
      path,
      writer: 'thread',
      checkpoint: 'background',
      busyTimeoutMs: 1234,
    })
    try {
      assert.equal(storage.writesInBackground, true)
      assert.deepEqual(await storage.writerSettings(), {
        journal_mode: 'wal',
        synchronous: 2,
        busy_timeout: 1234,
        foreign_keys: 1,
        wal_autocheckpoint: SAFETY_NET_PAGES,
        cache_size: -4_096,
      })
    } finally {
      await storage.close()
    }
    const normal = await openSqliteStorage({ path, writer: 'thread', synchronous: 'NORMAL' })
    try {
      const settings = await normal.writerSettings()
      assert.equal(settings?.synchronous, 1)
      assert.equal(settings?.wal_autocheckpoint, 1000, "SQLite's default without the checkpointer")
    } finally {
      await normal.close()
    }
  })

  it('starts its thread without loading TypeBox: the body imports no schema', () => {
    // Statically imported modules of the thread's body, followed through the compiled files: the
    // schemas' library took half of the thread's start (235 of 500 ms on a slow machine).
    const packages = new Set<string>()
    const seen = new Set<string>()
    const walk = (file: string): void => {
      if (seen.has(file)) return
      seen.add(file)
      const source = readFileSync(file, 'utf8')
      for (const [, specifier] of source.matchAll(
        /^(?:import|export)\b[^'"]*?['"]([^'"]+)['"]/gm,
      )) {
        if (specifier!.startsWith('.')) walk(join(dirname(file), specifier!))
        else packages.add(specifier!.split('/')[0]!)
      }
    }
    walk(
      fileURLToPath(
        new URL('../../../adapters/sqlite/threads/sqlite-writer-worker.js', import.meta.url),
      ),
    )
    assert.ok(seen.size > 20, `followed ${seen.size} modules`)
    assert.ok(packages.has('better-sqlite3') && packages.has('kysely'), [...packages].join(', '))
    assert.equal(packages.has('typebox'), false, [...packages].join(', '))
  })

  it("caps the reading connection's page cache at 4 MiB, which every commit of the writer empties", async () => {
    const cacheOf = async (config: Parameters<typeof openSqliteStorage>[0]) => {
      const storage = await openSqliteStorage(config)
      try {
        return storage.database.pragma('cache_size', { simple: true })
      } finally {
        await storage.close()
      }
    }
    assert.equal(await cacheOf({ path, writer: 'thread' }), -4_096)
    assert.equal(await cacheOf({ path, writer: 'thread', cacheSizeKib: 2_048 }), -2_048)
    assert.equal(await cacheOf({ path }), -65_536, 'inline, its own commits keep its cache')
    assert.equal(await cacheOf({ path: ':memory:', writer: 'thread' }), -65_536)
  })

  it('keeps the writes on the calling thread for :memory:, which a second connection cannot open', async () => {
    const storage = await openSqliteStorage({ path: ':memory:', writer: 'thread' })
    try {
      assert.equal(storage.writesInBackground, false)
      assert.equal(await storage.writerSettings(), undefined)
      const record = await insertBeneficiary(storage)
      assert.equal((await storage.beneficiaries.get(record.id))?.email, record.email)
    } finally {
      await storage.close()
    }
  })

  it('shows an acknowledged write to the next read on the calling thread: records, remembered totals, search', async () => {
    const storage = await openSqliteStorage({ path, writer: 'thread' })
    try {
      const byName = listQuery({ search: ['bianchi'] })
      assert.equal((await storage.beneficiaries.list(listQuery())).total, 0)
      assert.equal((await storage.beneficiaries.list(byName)).total, 0)
      const created = await insertBeneficiary(storage, fullBeneficiary())
      assert.deepEqual(await storage.beneficiaries.get(created.id), created)
      assert.equal((await storage.beneficiaries.list(listQuery())).total, 1)
      assert.equal((await storage.beneficiaries.list(byName)).total, 1)

      const next = nextVersion(created, { last_name: 'Verdi' }, created.updated_at + 1)
      const entry = historyEntry('updated', next.updated_at)
      assert.equal(await storage.beneficiaries.update(created, next, entry), 'done')
      assert.deepEqual(await storage.beneficiaries.get(created.id), next)
      assert.equal((await storage.beneficiaries.list(byName)).total, 0)
      assert.equal(await storage.beneficiaries.update(created, next, entry), 'conflict')

      const removed = historyEntry('deleted', next.updated_at + 1)
      assert.equal(await storage.beneficiaries.remove(created.id, next.version, removed), 'done')
      assert.equal(await storage.beneficiaries.get(created.id), undefined)
      assert.equal((await storage.beneficiaries.list(listQuery())).total, 0)
      assert.equal(await storage.beneficiaries.remove(created.id, undefined, removed), 'missing')

      await storage.clients.insert(clientRecord())
      await storage.sessions.insert(sessionRecord())
      assert.equal(
        await storage.sessions.isTokenActive(sessionRecord().id, 'jti-1', 'client-1'),
        true,
      )
      await storage.sessions.revoke(sessionRecord().id, 5, { jti: 'jti-1', expiresAt: 10 })
      assert.equal(
        await storage.sessions.isTokenActive(sessionRecord().id, 'jti-1', 'client-1'),
        false,
      )
      assert.equal(await storage.clients.revoke('client-1', 6), true)
      assert.equal((await storage.clients.get('client-1'))?.revoked_at, 6)
      await storage.signingKeys.insert({ kid: 'k1', secret: 's', created_at: 1 })
      assert.deepEqual(await storage.signingKeys.list(), [
        { kid: 'k1', secret: 's', created_at: 1 },
      ])
    } finally {
      await storage.close()
    }
  })

  it('rolls back a failing write alone in its group and gives the domain error, as inline', async () => {
    const storage = await openSqliteStorage({ path, writer: 'thread' })
    try {
      const taken = fullBeneficiary()
      await insertBeneficiary(storage, taken)
      const groups: [number, boolean][] = []
      storage.observeGroupCommits((size, committed) => groups.push([size, committed]))
      const records = [
        newBeneficiary({ email: 'one@example.org' }),
        fullBeneficiary({ email: 'duplicate@example.org' }),
        newBeneficiary({ email: 'two@example.org' }),
      ]
      const outcomes = await Promise.allSettled(
        records.map((record) => storage.beneficiaries.create(record, createdEntry(record))),
      )
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      )
      assert.ok(isFiscalCodeConflict((outcomes[1] as PromiseRejectedResult).reason))
      assert.deepEqual(groups, [[3, true]], 'one group, one transaction for the three')
      assert.equal((await storage.beneficiaries.list(listQuery())).total, 3)
      // A driver error outside the group commit crosses back with its code.
      await storage.clients.insert(clientRecord())
      await assert.rejects(storage.clients.insert(clientRecord()), (error: unknown) => {
        assert.ok(error instanceof Database.SqliteError)
        assert.equal(error.code, 'SQLITE_CONSTRAINT_UNIQUE')
        return true
      })
    } finally {
      await storage.close()
    }
  })

  it('keeps answering reads while a write waits for a lock, and fails the write with StorageUnavailableError past the busy timeout', async () => {
    const storage = await openSqliteStorage({ path, writer: 'thread', busyTimeoutMs: 5_000 })
    const holder = new Database(path, { timeout: 0 })
    try {
      const existing = await insertBeneficiary(storage)
      holder.exec('BEGIN IMMEDIATE')
      let settled = false
      const record = newBeneficiary({ email: 'waiting@example.org' })
      const waiting = storage.beneficiaries.create(record, createdEntry(record))
      void waiting.finally(() => (settled = true)).catch(() => {})
      // Inline, the event loop would sit in the writer's busy wait and these could not run
      // until the lock was released (never: its holder is on this thread).
      for (let i = 0; i < 20; i++) {
        assert.equal((await storage.beneficiaries.get(existing.id))?.id, existing.id)
        assert.equal((await storage.beneficiaries.list(listQuery())).total, 1)
      }
      assert.equal(settled, false, 'the write still waits for the lock')
      holder.exec('ROLLBACK')
      assert.equal(createdRecord(await waiting).email, 'waiting@example.org')
    } finally {
      if (holder.inTransaction) holder.exec('ROLLBACK')
      await storage.close()
    }

    const impatient = await openSqliteStorage({ path, writer: 'thread', busyTimeoutMs: 0 })
    try {
      holder.exec('BEGIN IMMEDIATE')
      const record = newBeneficiary({ email: 'refused@example.org' })
      await assert.rejects(
        impatient.beneficiaries.create(record, createdEntry(record)),
        (error) => {
          assert.ok(error instanceof StorageUnavailableError)
          assert.equal(error.reason, 'busy')
          assert.match(String((error.cause as { code?: unknown }).code), /^SQLITE_BUSY/)
          return true
        },
      )
      holder.exec('ROLLBACK')
      assert.equal((await impatient.beneficiaries.list(listQuery())).total, 2)
    } finally {
      if (holder.inTransaction) holder.exec('ROLLBACK')
      holder.close()
      await impatient.close()
    }
  })

  it('commits and answers the writes sent before close, then ends the thread; later writes reject', async () => {
    const storage = await openSqliteStorage({ path, writer: 'thread' })
    const records = [1, 2, 3, 4, 5].map((n) => newBeneficiary({ email: `close${n}@example.org` }))
    const writes = records.map((record) =>
      storage.beneficiaries.create(record, createdEntry(record)),
    )
    await storage.close()
    assert.equal(storage.writesInBackground, false)
    const ids = (await Promise.all(writes)).map((outcome) => createdRecord(outcome).id)
    assert.deepEqual(ids, [1, 2, 3, 4, 5])
    await assert.rejects(storage.beneficiaries.create(records[0]!, createdEntry(records[0]!)))
    await storage.close()

    const reopened = await openSqliteStorage({ path })
    try {
      assert.equal((await reopened.beneficiaries.list(listQuery())).total, 5)
    } finally {
      await reopened.close()
    }
  })

  it('reports its group commits to the server metrics', async () => {
    const storage = await openSqliteStorage({ path, writer: 'thread' })
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
      assert.equal(sampleValue(families, `${name}_count`), 2)
      assert.equal(sampleValue(families, `${name}_sum`), 3)
    } finally {
      await storage.close()
    }
  })

  it('fails every write a thread that dies had not answered with StorageUnavailableError, and starts a new one', async () => {
    const db = new Database(path)
    await (await openSqliteStorage({ path })).close()
    const order: string[] = []
    const thread = new SqliteWriterThread(
      db,
      () => order.push('committed'),
      new URL('dying-writer.js', STAND_INS),
    )
    try {
      const ok = newBeneficiary({ email: 'ok@example.org' })
      assert.equal(await thread.createBeneficiary(ok, createdEntry(ok), undefined), 1)
      order.push('acknowledged')
      assert.deepEqual(order, ['committed', 'acknowledged'], 'told before the write settles')

      const doomed = [
        newBeneficiary({ email: 'with@example.org' }),
        newBeneficiary({ email: 'die@example.org' }),
      ]
      const outcomes = await Promise.allSettled(
        doomed.map((record) => thread.createBeneficiary(record, createdEntry(record), undefined)),
      )
      for (const outcome of outcomes) {
        assert.equal(outcome.status, 'rejected')
        const error = (outcome as PromiseRejectedResult).reason as unknown
        assert.ok(error instanceof StorageUnavailableError)
        assert.equal(error.reason, 'io_error')
      }
      assert.equal(thread.running, false)
      assert.equal(db.prepare('SELECT count(*) FROM beneficiaries').pluck().get(), 1)

      const after = newBeneficiary({ email: 'after@example.org' })
      assert.equal(
        typeof (await thread.createBeneficiary(after, createdEntry(after), undefined)),
        'number',
      )
      assert.equal(thread.running, true, 'a new thread took over')
    } finally {
      await thread.close()
      db.close()
    }
  })

  it('fails its writes and its readiness with StorageUnavailableError when the thread cannot start', async () => {
    const db = new Database(path)
    const thread = new SqliteWriterThread(db, () => {}, new URL('broken-writer.js', STAND_INS))
    try {
      await assert.rejects(thread.ready(), StorageUnavailableError)
      const record = newBeneficiary()
      await assert.rejects(
        thread.createBeneficiary(record, createdEntry(record), undefined),
        (error) => error instanceof StorageUnavailableError && error.reason === 'io_error',
      )
    } finally {
      await thread.close()
      db.close()
    }
  })

  it('keeps the process alive while a write waits for its answer, and not once the thread is idle', () => {
    const storage = fileURLToPath(new URL('../../../adapters/sqlite/index.js', import.meta.url))
    // No close and no await at the end: only the pending write may keep the process running.
    const script = `
      import { openSqliteStorage } from ${JSON.stringify(storage)}
      const s = await openSqliteStorage({ path: ${JSON.stringify(path)}, writer: 'thread' })
      const r = { first_name: 'A', last_name: 'B', email: 'a@example.org', phone: null, date_of_birth: null, fiscal_code: null, address: null, metadata: {}, status: 'pending', created_at: 0, updated_at: 0 }
      s.beneficiaries.create(r, { at: 0, action: 'created', client_id: 'c', request_id: 'r', changes: [] })
        .then((o) => console.log('acknowledged', o.record.id))
    `
    const file = join(directory, 'pending-write.mjs')
    writeFileSync(file, script)
    const child = spawnSync(process.execPath, [file], {
      encoding: 'utf8',
      timeout: 30_000,
    })
    assert.equal(child.status, 0, child.stderr)
    assert.equal(child.stdout.trim(), 'acknowledged 1')
  })
})

describe('SqliteDataVersion.invalidate', () => {
  it('has the next read of this turn see another connection’s commit', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'sqlite-data-version-'))
    const path = join(directory, 'version.db')
    const reader = new Database(path)
    const writer = new Database(path)
    try {
      reader.pragma('journal_mode = WAL')
      writer.exec('CREATE TABLE t (x)')
      const version = new SqliteDataVersion(reader)
      const before = version.current()
      writer.exec('INSERT INTO t VALUES (1)')
      assert.equal(version.current(), before, 'read once per turn')
      version.invalidate()
      assert.notEqual(version.current(), before)
    } finally {
      reader.close()
      writer.close()
      await rm(directory, { recursive: true, force: true })
    }
  })
})
