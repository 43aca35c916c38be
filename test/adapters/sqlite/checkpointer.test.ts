import Database from 'better-sqlite3'
import assert from 'node:assert/strict'
import { existsSync, statSync } from 'node:fs'
import { mkdtemp, rm, unlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { describe, it } from 'node:test'
import { applySqlitePragmas, openSqliteStorage } from '../../../adapters/sqlite/index.js'
import {
  BEHIND_PAUSE_MS,
  FAILED_PAUSE_MS,
  IDLE_PAUSE_MS,
  nextCheckpointPause,
} from '../../../adapters/sqlite/threads/sqlite-checkpoint-schedule.js'
import {
  SAFETY_NET_PAGES,
  SqliteCheckpointer,
} from '../../../adapters/sqlite/threads/sqlite-checkpointer.js'
import { fullBeneficiary, insertBeneficiary } from '../../contracts/storage-fixtures.js'

async function inTemporaryDirectory(run: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'beneficiary-checkpoint-'))
  try {
    await run(dir)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/**
 * Polls `done` until it holds, for at most 10 s: the thread works on its own schedule (a real
 * thread, not a clock this test could advance), and a check every 10 ms costs nothing.
 */
async function eventually(done: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000
  while (!done()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`)
    await delay(10)
  }
}

function walPages(path: string): number {
  return existsSync(`${path}-wal`) ? Math.floor(statSync(`${path}-wal`).size / 4096) : 0
}

describe('SqliteCheckpointer: WAL checkpoints from a thread of their own', () => {
  it('copies the writes into the database file while the writer never checkpoints, and stops on close', async () => {
    await inTemporaryDirectory(async (dir) => {
      const path = join(dir, 'background.db')
      const storage = await openSqliteStorage({ path, checkpoint: 'background' })
      const db = storage.database
      assert.equal(storage.checkpointsInBackground, true)
      assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), SAFETY_NET_PAGES)
      const before = statSync(path).size
      for (let i = 0; i < 400; i++) {
        await insertBeneficiary(
          storage,
          fullBeneficiary({ email: `person${i}@example.org`, fiscal_code: null }),
        )
      }
      assert.ok(walPages(path) > 0, 'the writes went to the WAL')
      // Far below the writer's own threshold: only the thread can have copied them.
      assert.ok(walPages(path) < SAFETY_NET_PAGES)
      await eventually(() => statSync(path).size > before, 'the database file holds the writes')

      await storage.close()
      assert.equal(storage.checkpointsInBackground, false)
      // The last connection to close folds the WAL in and removes it: the thread's was closed.
      assert.equal(existsSync(`${path}-wal`), false)
      const reopened = new Database(path, { readonly: true })
      try {
        assert.equal(reopened.prepare('SELECT count(*) FROM beneficiaries').pluck().get(), 400)
      } finally {
        reopened.close()
      }
    })
  })

  it('gives the writer SQLite’s own automatic checkpoints back when its thread ends on its own', async () => {
    await inTemporaryDirectory(async (dir) => {
      const path = join(dir, 'gone.db')
      const db = new Database(path)
      try {
        applySqlitePragmas(db)
        // The thread opens the file by name: with the name gone, it fails to start.
        await unlink(path)
        const checkpointer = new SqliteCheckpointer(db)
        await eventually(() => !checkpointer.running, 'the thread has ended')
        assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), 1000)
        await checkpointer.stop()
      } finally {
        db.close()
      }
    })
  })

  it('is inline by default and for an in-memory database, and refuses an unknown mode', async () => {
    await inTemporaryDirectory(async (dir) => {
      const inline = await openSqliteStorage({ path: join(dir, 'inline.db') })
      assert.equal(inline.checkpointsInBackground, false)
      assert.equal(inline.database.pragma('wal_autocheckpoint', { simple: true }), 1000)
      await inline.close()
    })
    const memory = await openSqliteStorage({ path: ':memory:', checkpoint: 'background' })
    assert.equal(memory.checkpointsInBackground, false)
    await memory.close()
    assert.throws(() => new SqliteCheckpointer(new Database(':memory:')), TypeError)
    await assert.rejects(
      openSqliteStorage({
        path: ':memory:',
        checkpoint: 'sometimes' as unknown as 'inline',
      }),
      TypeError,
    )
  })

  it('checkpoints again soon while behind or while writes keep coming, slowly once caught up and idle, and backs off after a failure', () => {
    const caughtUp = { busy: 0, log: 10, checkpointed: 10 }
    assert.equal(nextCheckpointPause(caughtUp, false), IDLE_PAUSE_MS)
    assert.equal(nextCheckpointPause(caughtUp), IDLE_PAUSE_MS)
    assert.equal(
      nextCheckpointPause(caughtUp, true),
      BEHIND_PAUSE_MS,
      'a commit since the last checkpoint: writes are coming',
    )
    assert.equal(nextCheckpointPause({ busy: 0, log: 0, checkpointed: 0 }), IDLE_PAUSE_MS)
    assert.equal(nextCheckpointPause({ busy: 0, log: 12, checkpointed: 10 }), BEHIND_PAUSE_MS)
    assert.equal(nextCheckpointPause({ busy: 1, log: 10, checkpointed: 10 }), BEHIND_PAUSE_MS)
    assert.equal(nextCheckpointPause(undefined), FAILED_PAUSE_MS)
    assert.ok(BEHIND_PAUSE_MS < IDLE_PAUSE_MS && IDLE_PAUSE_MS < FAILED_PAUSE_MS)
  })
})
