import Database from 'better-sqlite3'
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { openSqliteStorage } from '../../adapters/sqlite/index.js'
import type { BeneficiaryRecord } from '../../core/beneficiary.js'
import {
  historyEntry,
  insertBeneficiary,
  listQuery,
  newBeneficiary,
  nextVersion,
  T0,
} from '../contracts/storage-fixtures.js'

/**
 * The first name the list shows for a record renamed behind the copies' back (by another
 * connection, without logging it), after `updates` writes of other records, one group each, and
 * the logs then pruned up to their last generation, as a longer burst would have them pruned: the
 * old name if the copies had caught up between the writes, the new one if they loaded anew.
 */
async function nameAfterBurst(writer: 'inline' | 'thread', updates: number): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'keep-up-'))
  const path = join(directory, 'keep-up.db')
  const storage = await openSqliteStorage({ path, writer })
  const db = new Database(path)
  try {
    const renamed = await insertBeneficiary(storage, newBeneficiary({ first_name: 'Anna' }))
    const others: BeneficiaryRecord[] = []
    for (let i = 0; i < 10; i++) {
      others.push(await insertBeneficiary(storage, newBeneficiary({ email: `o${i}@example.org` })))
    }
    await storage.beneficiaries.list(listQuery())
    db.prepare("UPDATE beneficiaries SET first_name = 'Zoe' WHERE id = ?").run(renamed.id)
    for (let i = 0; i < updates; i++) {
      const at = T0 + (i + 1) * 1000
      const next = nextVersion(others[i % 10]!, { phone: `+39 06 ${1000 + i}` }, at)
      await storage.beneficiaries.update(others[i % 10]!, next, historyEntry('updated', at))
      others[i % 10] = next
    }
    // The catch-up runs after the I/O of the turn of the last write.
    await new Promise((resolve) => setImmediate(resolve))
    for (const table of ['beneficiary_write_log', 'beneficiary_counter_log']) {
      db.exec(`DELETE FROM ${table} WHERE generation < (SELECT max(generation) FROM ${table})`)
    }
    const page = await storage.beneficiaries.list(listQuery())
    assert.equal(page.total, 11)
    return page.items.find((item) => item.id === renamed.id)!.first_name
  } finally {
    db.close()
    await storage.close()
    await rm(directory, { recursive: true, force: true })
  }
}

describe('SQLite copies kept up by the writes', () => {
  for (const writer of ['inline', 'thread'] as const) {
    it(`catch up every 256 writes without a listing, so that a burst never has them load anew (writer ${writer})`, async () => {
      assert.equal(await nameAfterBurst(writer, 256), 'Anna', 'caught up: no load anew')
      assert.equal(await nameAfterBurst(writer, 255), 'Zoe', 'behind: loaded anew')
    })
  }
})
