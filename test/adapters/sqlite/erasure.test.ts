import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, it } from 'node:test'
import { openSqliteStorage, type SqliteStorage } from '../../../adapters/sqlite/index.js'
import {
  historyEntry,
  insertBeneficiary,
  listQuery,
  newBeneficiary,
  nextVersion,
  T0,
} from '../../contracts/storage-fixtures.js'

// D27 in the SQLite adapter: what a delete erases leaves the search index, the freed space and
// the WAL, so that no file keeps it. The real-process test (test/security/erasure.test.ts)
// scans every file; these check each part on its own.

/** How many pages of the search index hold `word`. */
function pagesHolding(storage: SqliteStorage, word: string): number {
  return storage.database
    .prepare<[Buffer], { n: number }>(
      'SELECT count(*) AS n FROM beneficiary_search_data WHERE instr(block, ?) > 0',
    )
    .get(Buffer.from(word))!.n
}

function walBytes(path: string): number {
  try {
    return statSync(`${path}-wal`).size
  } catch {
    return 0
  }
}

async function until(test: () => boolean, deadlineMs: number): Promise<boolean> {
  const end = performance.now() + deadlineMs
  while (!test()) {
    if (performance.now() > end) return false
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  return true
}

for (const writer of ['inline', 'thread'] as const) {
  describe(`erasure in the SQLite adapter, writes ${writer} (D27)`, () => {
    let directory = ''
    let path = ''
    let storage: SqliteStorage

    beforeEach(async () => {
      directory = await mkdtemp(join(tmpdir(), 'sqlite-erasure-'))
      path = join(directory, 'erasure.db')
      storage = await openSqliteStorage({ path, writer })
    })

    afterEach(async () => {
      await storage.close()
      await rm(directory, { recursive: true, force: true })
    })

    it('takes the words of a renamed, moved and deleted record out of the search index, and search still answers', async () => {
      const kept = await insertBeneficiary(storage, newBeneficiary({ last_name: 'Rossi' }))
      const record = await insertBeneficiary(
        storage,
        newBeneficiary({ first_name: 'Qxerased', last_name: 'Zqgone', email: 'q@example.org' }),
      )
      const renamed = nextVersion(record, { first_name: 'Xqrenamed' }, T0 + 1)
      const entry = historyEntry('updated', T0 + 1)
      assert.equal(await storage.beneficiaries.update(record, renamed, entry), 'done')
      const moved = nextVersion(renamed, { status: 'inactive' }, T0 + 2)
      assert.equal(await storage.beneficiaries.update(renamed, moved, entry), 'done')
      assert.equal(pagesHolding(storage, 'qxerased'), 0, 'the old first name went at the rename')
      assert.ok(pagesHolding(storage, 'xqrenamed') > 0)
      const search = async (word: string): Promise<number[]> =>
        (await storage.beneficiaries.list(listQuery({ search: [word] }))).items.map((i) => i.id)
      assert.deepEqual(await search('zqgo'), [record.id])

      const removed = historyEntry('deleted', T0 + 3)
      assert.equal(await storage.beneficiaries.remove(record.id, undefined, removed), 'done')
      for (const word of ['qxerased', 'xqrenamed', 'zqgone']) {
        assert.equal(pagesHolding(storage, word), 0, word)
      }
      assert.deepEqual(await search('zqgo'), [])
      assert.deepEqual(await search('ross'), [kept.id])
      storage.database.exec(
        "INSERT INTO beneficiary_search (beneficiary_search) VALUES ('integrity-check')",
      )
    })

    it('zeroes what a delete frees and empties the WAL soon after, on every connection that writes', async () => {
      assert.equal(storage.database.pragma('secure_delete', { simple: true }), 1)
      const record = await insertBeneficiary(storage)
      assert.ok(walBytes(path) > 0)
      const removed = historyEntry('deleted', T0 + 1)
      assert.equal(await storage.beneficiaries.remove(record.id, undefined, removed), 'done')
      assert.ok(await until(() => walBytes(path) === 0, 5_000), 'the WAL was emptied')
    })
  })
}
