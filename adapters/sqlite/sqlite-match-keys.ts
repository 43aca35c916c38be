import type BetterSqlite3 from 'better-sqlite3'
import type { BeneficiaryRecord } from '../../core/beneficiary.js'
import {
  nameTrigrams as trigrams,
  storedMatchKeys,
  trigramSimilarity,
} from '../../core/matching/match-keys.js'
import type { MatchQuery, MatchStore } from '../../core/ports/match-store.js'
import { queryBuilder, slot, SqliteQuery } from './sqlite-query.js'
import { RECORD_COLUMNS, recordOf } from './writes/sqlite-beneficiary-columns.js'

/** The facts of a record its match keys are made of. */
type KeyedRecord = Pick<
  BeneficiaryRecord,
  'first_name' | 'last_name' | 'email' | 'phone' | 'date_of_birth'
>

/** Names whose trigrams are kept between matches. */
const TRIGRAM_CACHE_SIZE = 10_000

/** Least trigram similarity of the names of the records born on the candidate's dates. */
const BORN_SAME_DAY_SIMILARITY = 0.3

/**
 * The statements that keep a record's match keys (D38) in step with its writes: a row of
 * `beneficiary_match_keys` and its name in the trigram index `beneficiary_match_names`. Run
 * inside the write's own transaction by the store and the seeder.
 */
export class SqliteMatchKeyWrites {
  readonly #insert: BetterSqlite3.Statement
  readonly #insertName: BetterSqlite3.Statement
  readonly #select: BetterSqlite3.Statement<[number], { name_key: string }>
  readonly #delete: BetterSqlite3.Statement
  readonly #deleteName: BetterSqlite3.Statement

  constructor(db: BetterSqlite3.Database) {
    this.#insert = db.prepare(
      `INSERT INTO beneficiary_match_keys (id, email_key, phone_key, date_of_birth, name_key)
        VALUES (?, ?, ?, ?, ?)`,
    )
    this.#insertName = db.prepare(
      'INSERT INTO beneficiary_match_names (rowid, name_key) VALUES (?, ?)',
    )
    this.#select = db.prepare('SELECT name_key FROM beneficiary_match_keys WHERE id = ?')
    this.#delete = db.prepare('DELETE FROM beneficiary_match_keys WHERE id = ?')
    // External content: the index takes a row out given the values it was given.
    this.#deleteName = db.prepare(
      `INSERT INTO beneficiary_match_names (beneficiary_match_names, rowid, name_key)
        VALUES ('delete', ?, ?)`,
    )
  }

  /** Stores the keys of the new record `id`. */
  add(id: number, record: KeyedRecord): void {
    const keys = storedMatchKeys(record)
    this.#insert.run(id, keys.email_key, keys.phone_key, record.date_of_birth, keys.name_key)
    this.#insertName.run(id, keys.name_key)
  }

  /** Replaces the keys of `id` when one of the facts they are made of changed. */
  replace(id: number, previous: KeyedRecord, next: KeyedRecord): void {
    if (
      previous.first_name === next.first_name &&
      previous.last_name === next.last_name &&
      previous.email === next.email &&
      previous.phone === next.phone &&
      previous.date_of_birth === next.date_of_birth
    ) {
      return
    }
    this.remove(id)
    this.add(id, next)
  }

  /** Erases the keys of `id`, its name from the trigram index included. */
  remove(id: number): void {
    const stored = this.#select.get(id)
    if (stored === undefined) return
    this.#deleteName.run(id, stored.name_key)
    this.#delete.run(id)
  }
}

/**
 * Retrieval of possible duplicates on SQLite (D38), on the reading connection: the fiscal
 * code's unique index, the e-mail, phone and date-of-birth indexes of `beneficiary_match_keys`,
 * and the FTS5 trigram index of the names; never a scan of the table.
 */
export class SqliteMatchStore implements MatchStore {
  readonly #assertOpen: () => void
  readonly #byFiscalCode: BetterSqlite3.Statement<[string, number], { id: number }>
  readonly #byEmail: BetterSqlite3.Statement<[string, number], { id: number }>
  readonly #byPhone: BetterSqlite3.Statement<[string, number], { id: number }>
  readonly #byBirth: BetterSqlite3.Statement<[string, number], { id: number; name_key: string }>
  readonly #byName: BetterSqlite3.Statement<[string, number], { id: number }>
  readonly #record: SqliteQuery<never>
  /** Trigrams of the names last compared: names repeat, and a set costs more than a look-up. */
  readonly #trigrams = new Map<string, ReadonlySet<string>>()

  constructor(db: BetterSqlite3.Database, assertOpen: () => void) {
    this.#assertOpen = assertOpen
    this.#byFiscalCode = db.prepare('SELECT id FROM beneficiaries WHERE fiscal_code = ? LIMIT ?')
    this.#byEmail = db.prepare('SELECT id FROM beneficiary_match_keys WHERE email_key = ? LIMIT ?')
    this.#byPhone = db.prepare('SELECT id FROM beneficiary_match_keys WHERE phone_key = ? LIMIT ?')
    this.#byBirth = db.prepare(
      `SELECT id, name_key FROM beneficiary_match_keys INDEXED BY beneficiary_match_keys_birth
        WHERE date_of_birth = ? LIMIT ?`,
    )
    this.#byName = db.prepare(
      `SELECT rowid AS id FROM beneficiary_match_names WHERE beneficiary_match_names MATCH ?
        ORDER BY rank LIMIT ?`,
    )
    this.#record = new SqliteQuery(
      db,
      queryBuilder.selectFrom('beneficiaries').where('id', '=', slot('id')).select(RECORD_COLUMNS),
    )
  }

  async candidates(query: MatchQuery): Promise<readonly BeneficiaryRecord[]> {
    this.#assertOpen()
    const ids = new Set<number>()
    const { limit } = query
    const take = (rows: readonly { id: number }[]) => {
      for (const row of rows) ids.add(row.id)
    }
    if (query.fiscalCode !== undefined) take(this.#byFiscalCode.all(query.fiscalCode, limit))
    if (query.email !== undefined) take(this.#byEmail.all(query.email, limit))
    if (query.phone !== undefined) take(this.#byPhone.all(query.phone, limit))
    if (query.name !== undefined) {
      const grams = trigrams(query.name)
      for (const date of query.datesOfBirth ?? []) {
        // Born the same day: few enough that their names are compared here.
        const born = this.#byBirth
          .all(date, limit * 20)
          .filter(
            (row) =>
              trigramSimilarity(grams, this.#trigramsOf(row.name_key)) >= BORN_SAME_DAY_SIMILARITY,
          )
        take(born.slice(0, limit))
      }
      const words = query.name.split(' ').filter((word) => [...word].length >= 3)
      if (query.nearestNames === true && words.length > 0) {
        // Every word of three letters or more, as a substring in any order: the words of a
        // name given the other way round, or shortened, are found too.
        const match = words.map((word) => `"${word.replaceAll('"', '""')}"`).join(' ')
        take(this.#byName.all(match, limit))
      }
    }
    if (query.excludeId !== undefined) ids.delete(query.excludeId)
    const records: BeneficiaryRecord[] = []
    for (const id of ids) {
      const values = this.#record.getValues({ id })
      if (values !== undefined) records.push(recordOf(values))
    }
    return records
  }

  #trigramsOf(name: string): ReadonlySet<string> {
    let grams = this.#trigrams.get(name)
    if (grams === undefined) {
      if (this.#trigrams.size >= TRIGRAM_CACHE_SIZE) this.#trigrams.clear()
      grams = trigrams(name)
      this.#trigrams.set(name, grams)
    }
    return grams
  }
}
