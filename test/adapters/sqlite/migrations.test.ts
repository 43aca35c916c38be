import Database from 'better-sqlite3'
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, it } from 'node:test'
import { SqliteStorage, migrateSqlite, openSqliteStorage } from '../../../adapters/sqlite/index.js'
import {
  SQLITE_MIGRATIONS,
  pendingMigrations,
} from '../../../adapters/sqlite/migrations/sqlite-migrations.js'
import { T0, listQuery } from '../../contracts/storage-fixtures.js'
import { counters } from '../../support/sqlite-counters.js'

const ALL = Object.keys(SQLITE_MIGRATIONS).sort()
const FIRST = ALL[0]!

/** Every schema object and every applied migration: what "the file as it was" means here. */
function snapshot(db: Database.Database): unknown {
  return {
    schema: db.prepare('SELECT type, name, sql FROM sqlite_master ORDER BY type, name').all(),
    migrations: db.prepare('SELECT name FROM kysely_migration ORDER BY name').all(),
    rows: db.prepare('SELECT * FROM beneficiaries ORDER BY id').all(),
  }
}

/** A beneficiary row as the first schema version stores it, with its search words. */
function insertRow(db: Database.Database, status: string, createdAt: number): void {
  const { lastInsertRowid } = db
    .prepare(
      `INSERT INTO beneficiaries (first_name, last_name, email, metadata, status, created_at,
         updated_at, version, sort_first, sort_last)
       VALUES ('Mario', 'Rossi', 'mario@example.org', '{}', ?, ?, ?, 1, 'mario', 'rossi')`,
    )
    .run(status, createdAt, createdAt)
  db.prepare(
    `INSERT INTO beneficiary_search (rowid, words, status) VALUES (?, 'mario rossi', ?)`,
  ).run(lastInsertRowid, status)
}

describe('SQLite schema migrations', () => {
  let directory = ''
  let path = ''

  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'sqlite-migrations-'))
    path = join(directory, 'schema.db')
  })

  afterEach(async () => {
    await rm(directory, { recursive: true, force: true })
  })

  it('runs every migration when a new file is opened, and none the second time', async () => {
    const storage = await openSqliteStorage({ path })
    assert.deepEqual(pendingMigrations(storage.database), [])
    assert.deepEqual(await migrateSqlite(storage.database), [])
    const applied = storage.database.prepare('SELECT name FROM kysely_migration ORDER BY name')
    assert.deepEqual(
      applied.all().map((row) => (row as { name: string }).name),
      ALL,
    )
    assert.deepEqual(storage.migrationsApplied, ALL)
    await storage.close()
    const again = await openSqliteStorage({ path })
    assert.deepEqual(again.migrationsApplied, [])
    await again.close()
  })

  it('with create false, refuses a missing file and makes none; with migrate false, an old schema', async () => {
    await assert.rejects(openSqliteStorage({ path, create: false }))
    assert.equal(existsSync(path), false)
    const old = new Database(path)
    await migrateSqlite(old, { to: FIRST })
    old.close()
    await assert.rejects(openSqliteStorage({ path, create: false, migrate: false }), TypeError)
    const db = new Database(path)
    assert.deepEqual(pendingMigrations(db), ALL.slice(1), 'nothing was applied')
    db.close()
    const storage = await openSqliteStorage({ path, create: false })
    assert.deepEqual(storage.migrationsApplied, ALL.slice(1))
    await storage.close()
    const current = await openSqliteStorage({ path, create: false, migrate: false })
    assert.deepEqual(current.migrationsApplied, [])
    await current.close()
  })

  it('opens a file made by an older schema version and upgrades it, keeping its rows', async () => {
    const db = new Database(path)
    assert.deepEqual(await migrateSqlite(db, { to: FIRST }), [FIRST])
    insertRow(db, 'active', T0)
    insertRow(db, 'active', T0 + 86_400_000)
    insertRow(db, 'pending', T0)
    db.close()

    const storage = await openSqliteStorage({ path })
    try {
      assert.deepEqual(pendingMigrations(storage.database), [])
      const list = storage.beneficiaries
      assert.equal((await list.list(listQuery())).total, 3)
      assert.equal((await list.list(listQuery({ status: 'active' }))).total, 2)
      const firstDay = { createdFrom: T0 - (T0 % 86_400_000), createdBefore: T0 + 86_400_000 }
      assert.equal((await list.list(listQuery(firstDay))).total, 2)
      assert.equal((await list.list(listQuery({ search: ['ross'], status: 'pending' }))).total, 1)
      assert.equal((await list.get(1))?.last_name, 'Rossi')
    } finally {
      await storage.close()
    }
  })

  it('D27: makes the search table anew in secure-delete mode, without the words of records deleted before', async () => {
    const db = new Database(path)
    await migrateSqlite(db, { to: '0007_name_keys_folded' })
    insertRow(db, 'active', T0)
    // Deleted as the adapter did before: its words stay in the index's segments.
    const { lastInsertRowid: gone } = db
      .prepare(
        `INSERT INTO beneficiaries (first_name, last_name, email, metadata, status, created_at,
           updated_at, version, sort_first, sort_last)
         VALUES ('Zqxerased', 'Zqxgone', 'z@example.org', '{}', 'active', ?, ?, 1,
           'zqxerased', 'zqxgone')`,
      )
      .run(T0, T0)
    db.prepare(`INSERT INTO beneficiary_search (rowid, words, status) VALUES (?, ?, 'active')`).run(
      gone,
      'zqxerased zqxgone',
    )
    db.prepare('DELETE FROM beneficiaries WHERE id = ?').run(gone)
    db.prepare('DELETE FROM beneficiary_search WHERE rowid = ?').run(gone)
    const holding = (connection: Database.Database): number =>
      connection
        .prepare<[Buffer], { n: number }>(
          'SELECT count(*) AS n FROM beneficiary_search_data WHERE instr(block, ?) > 0',
        )
        .get(Buffer.from('zqxerased'))!.n
    assert.ok(holding(db) > 0, 'the old table keeps the words of a deleted row')
    db.close()

    const storage = await openSqliteStorage({ path })
    try {
      assert.ok(storage.migrationsApplied.includes('0009_search_secure_delete'))
      assert.equal(holding(storage.database), 0)
      const config = storage.database
        .prepare("SELECT v FROM beneficiary_search_config WHERE k = 'secure-delete'")
        .get() as { v: number }
      assert.equal(config.v, 1)
      const found = await storage.beneficiaries.list(listQuery({ search: ['ross'] }))
      assert.deepEqual(
        found.items.map((item) => item.id),
        [1],
      )
    } finally {
      await storage.close()
    }
  })

  it('folds the name keys of records stored before ł, ø and ß were folded, with their counters', async () => {
    const db = new Database(path)
    await migrateSqlite(db, { to: FIRST })
    // As `searchTerms()` keyed them before: marks stripped, ł and ß kept.
    const rows = [
      ['Łucja', 'Wałęsa', 'łucja', 'wałesa'],
      ['Lucia', 'Straße', 'lucia', 'straße'],
      ['Mario', 'Rossi', 'mario', 'rossi'],
    ]
    for (const [first, last, sortFirst, sortLast] of rows) {
      const { lastInsertRowid } = db
        .prepare(
          `INSERT INTO beneficiaries (first_name, last_name, email, metadata, status, created_at,
             updated_at, version, sort_first, sort_last)
           VALUES (?, ?, 'x@example.org', '{}', 'active', ?, ?, 1, ?, ?)`,
        )
        .run(first, last, T0, T0, sortFirst, sortLast)
      db.prepare(
        `INSERT INTO beneficiary_search (rowid, words, status) VALUES (?, ?, 'active')`,
      ).run(lastInsertRowid, `${sortFirst!} ${sortLast!}`)
    }
    db.close()

    const storage = await openSqliteStorage({ path })
    try {
      assert.ok(storage.migrationsApplied.includes('0007_name_keys_folded'))
      const ids = async (query: Parameters<typeof listQuery>[0]) =>
        (await storage.beneficiaries.list(listQuery(query))).items.map((item) => item.id)
      assert.deepEqual(await ids({ search: ['lucja', 'walesa'] }), [1])
      assert.deepEqual(await ids({ search: ['strasse'] }), [2])
      assert.deepEqual(await ids({ search: ['luc'] }), [1, 2])
      assert.deepEqual(await ids({ sort: 'first_name' }), [2, 1, 3])
      assert.deepEqual(await ids({ sort: 'last_name' }), [3, 2, 1])
      const keys = storage.database.prepare(
        'SELECT sort_first, sort_last FROM beneficiaries ORDER BY id',
      )
      assert.deepEqual(keys.all(), [
        { sort_first: 'lucja', sort_last: 'walesa' },
        { sort_first: 'lucia', sort_last: 'strasse' },
        { sort_first: 'mario', sort_last: 'rossi' },
      ])
      // Every counter, as kept and as counted from the records again.
      const { kept, recounted } = counters(storage)
      assert.deepEqual(kept, recounted)
    } finally {
      await storage.close()
    }
  })

  it('leaves the file exactly as it was when a migration fails, earlier pending ones included', async () => {
    const db = new Database(path)
    await migrateSqlite(db, { to: FIRST })
    insertRow(db, 'active', T0)
    const before = snapshot(db)

    const broken = {
      ...SQLITE_MIGRATIONS,
      '9999_broken': {
        async up(): Promise<void> {
          db.exec('CREATE TABLE half_done (id INTEGER PRIMARY KEY)')
          throw new Error('this migration fails halfway')
        },
      },
    }
    await assert.rejects(migrateSqlite(db, { migrations: broken }), (error: unknown) => {
      assert.ok(error instanceof Error)
      assert.equal((error.cause as Error).message, 'this migration fails halfway')
      return true
    })
    assert.deepEqual(snapshot(db), before)
    assert.equal(db.inTransaction, false)
    assert.deepEqual(pendingMigrations(db), ALL.slice(1))
    db.close()

    const storage = await openSqliteStorage({ path })
    assert.equal((await storage.beneficiaries.list(listQuery())).total, 1)
    await storage.close()
  })

  it('refuses a file migrated by a newer version it does not know, changing nothing', async () => {
    const db = new Database(path)
    await migrateSqlite(db)
    db.prepare(`INSERT INTO kysely_migration (name, timestamp) VALUES ('9999_future', 'x')`).run()
    const before = snapshot(db)
    await assert.rejects(migrateSqlite(db))
    assert.deepEqual(snapshot(db), before)
    assert.throws(() => new SqliteStorage(db), TypeError)
    db.close()
    await assert.rejects(openSqliteStorage({ path }))
  })
})
