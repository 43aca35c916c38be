import { type Migration, sql } from 'kysely'
import { nameSortKey } from '../../../core/search-terms.js'
import { nameKeys } from '../writes/sqlite-beneficiary-columns.js'

/** Ids per statement of `nameKeysFolded`: a bounded number of rows in memory at a time. */
const REKEYED_IDS = 65_536

interface CountedName {
  readonly name: string
  readonly block: number
  readonly status: string
  readonly sort_key: string
  readonly raw_name: string
}

interface NamedRow {
  readonly id: number
  readonly status: string
  readonly first_name: string
  readonly last_name: string
  readonly sort_first: string
  readonly sort_last: string
}

// `searchTerms()` now folds letters that keep their mark when decomposed (`ł`, `ø`, `đ`) and
// ligatures (`æ`, `œ`, `ß`): the name keys of every record whose names hold a letter outside
// ASCII are computed again, and those that changed are written with their search words and
// their name counters. Both logs get an entry that no copy can follow, so that every
// connection's copies of the counters and of the records' keys load anew.
export const nameKeysFolded: Migration = {
  async up(db) {
    const last = await sql<{ n: number | null }>`SELECT max(id) AS n FROM beneficiaries`.execute(db)
    const maxId = last.rows[0]?.n ?? 0
    let changed = 0
    for (let from = 0; from <= maxId; from += REKEYED_IDS) {
      const rows = await sql<NamedRow>`SELECT id, status, first_name, last_name, sort_first,
          sort_last FROM beneficiaries WHERE id >= ${from} AND id < ${from + REKEYED_IDS}
          AND (first_name GLOB '*[^ -~]*' OR last_name GLOB '*[^ -~]*')`.execute(db)
      const rekeyed: [id: number, first: string, last: string, words: string, status: string][] = []
      for (const row of rows.rows) {
        const keys = nameKeys(row)
        if (keys.sort_first === row.sort_first && keys.sort_last === row.sort_last) continue
        rekeyed.push([row.id, keys.sort_first, keys.sort_last, keys.words, row.status])
      }
      if (rekeyed.length === 0) continue
      changed += rekeyed.length
      const json = JSON.stringify(rekeyed)
      await sql`UPDATE beneficiaries SET sort_first = r.value ->> 1, sort_last = r.value ->> 2
          FROM json_each(${json}) AS r WHERE beneficiaries.id = r.value ->> 0`.execute(db)
      await sql`DELETE FROM beneficiary_search
          WHERE rowid IN (SELECT value ->> 0 FROM json_each(${json}))`.execute(db)
      await sql`INSERT INTO beneficiary_search (rowid, words, status)
          SELECT value ->> 0, value ->> 3, value ->> 4 FROM json_each(${json})`.execute(db)
    }
    if (changed === 0) return
    // The sort key is a function of the raw name, which the counters' key holds too: no two
    // rows of the counters become one.
    const counted = await sql<CountedName>`SELECT name, block, status, sort_key, raw_name
        FROM beneficiary_name_key_counts WHERE raw_name GLOB '*[^ -~]*'`.execute(db)
    for (const row of counted.rows) {
      const key = nameSortKey(row.raw_name)
      if (key === row.sort_key) continue
      await sql`UPDATE beneficiary_name_key_counts SET sort_key = ${key}
          WHERE name = ${row.name} AND block = ${row.block} AND status = ${row.status}
          AND sort_key = ${row.sort_key} AND raw_name = ${row.raw_name}`.execute(db)
    }
    await sql`INSERT INTO beneficiary_counter_log (changes) VALUES ('null')`.execute(db)
    await sql`INSERT INTO beneficiary_write_log (ids) VALUES ('null')`.execute(db)
  },
}
