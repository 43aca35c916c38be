import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openSqliteStorage, type SqliteStorage } from '../../adapters/sqlite/index.js'
import type { SortField } from '../../core/beneficiary.js'

/** The ORDER BY of each sort (D15), as plain SQL on `beneficiaries` writes it. */
export const SQL_ORDER: Readonly<Record<SortField, string>> = {
  id: 'id',
  created_at: 'created_at, id',
  updated_at: 'updated_at, id',
  last_name: 'sort_last, last_name, id',
  first_name: 'sort_first, first_name, id',
}

/** Runs `test` with two connections to one new file, closed and removed afterwards. */
export async function withTwoConnections(
  test: (storage: SqliteStorage, other: SqliteStorage, path: string) => Promise<void>,
): Promise<void> {
  const directory = await mkdtemp(join(tmpdir(), 'sqlite-list-'))
  const path = join(directory, 'list.db')
  const storage = await openSqliteStorage({ path })
  const other = await openSqliteStorage({ path })
  try {
    await test(storage, other, path)
  } finally {
    await other.close()
    await storage.close()
    await rm(directory, { recursive: true, force: true })
  }
}
