import type { SqliteStorage } from '../../adapters/sqlite/index.js'
import { DAY_MS } from '../../core/time.js'

/** Every counter table, as rows with a positive count, and the same counted from scratch. */
export function counters(storage: SqliteStorage): { kept: unknown; recounted: unknown } {
  const db = storage.database
  const rows = (sql: string) => db.prepare(sql).all()
  const day = (column: string) => `CAST(${column} / ${DAY_MS} AS INTEGER)`
  return {
    kept: [
      rows('SELECT status, day, n FROM beneficiary_day_counts WHERE n > 0 ORDER BY 1, 2'),
      rows('SELECT status, block, n FROM beneficiary_block_counts WHERE n > 0 ORDER BY 1, 2'),
      rows('SELECT status, day, n FROM beneficiary_updated_counts WHERE n > 0 ORDER BY 1, 2'),
      rows(
        `SELECT name, status, sort_key, raw_name, block, n FROM beneficiary_name_key_counts
          WHERE n > 0 ORDER BY 1, 2, 3, 4, 5`,
      ),
      // The total of a status, as the listing reads it: the sum of its blocks.
      rows(
        'SELECT status, sum(n) AS n FROM beneficiary_block_counts GROUP BY 1 HAVING sum(n) > 0 ORDER BY 1',
      ),
    ],
    recounted: [
      rows(
        `SELECT status, ${day('created_at')} AS day, count(*) AS n FROM beneficiaries GROUP BY 1, 2 ORDER BY 1, 2`,
      ),
      rows(
        'SELECT status, id >> 10 AS block, count(*) AS n FROM beneficiaries GROUP BY 1, 2 ORDER BY 1, 2',
      ),
      rows(
        `SELECT status, ${day('updated_at')} AS day, count(*) AS n FROM beneficiaries GROUP BY 1, 2 ORDER BY 1, 2`,
      ),
      rows(`SELECT name, status, sort_key, raw_name, block, count(*) AS n FROM (
          SELECT 'first' AS name, status, sort_first AS sort_key, first_name AS raw_name,
            id >> 15 AS block FROM beneficiaries
          UNION ALL SELECT 'last', status, sort_last, last_name, id >> 15 FROM beneficiaries
        ) GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5`),
      rows('SELECT status, count(*) AS n FROM beneficiaries GROUP BY 1 ORDER BY 1'),
    ],
  }
}
