import { sql, type Migration } from 'kysely'
import { storedMatchKeys } from '../../../core/matching/match-keys.js'

const BATCH = 10_000

// The match keys of duplicate matching (D38), one row per record with the record's id, kept
// by the store's writes and by the seeder: the e-mail lower-cased, the phone in E.164, the
// folded full name, and the date of birth, each looked up through an index. The names are also
// in an FTS5 table with the `trigram` tokenizer (external content: the keys table), for the
// records whose names alone are alike. `secure-delete`: a deleted record's name leaves the
// index's pages at once (D27). The keys of the records already stored are made here, in
// batches, with the core's own normalisation (libphonenumber-js for the phones).
export const matchKeys: Migration = {
  async up(db) {
    await sql`CREATE TABLE beneficiary_match_keys (
      id INTEGER PRIMARY KEY,
      email_key TEXT NOT NULL,
      phone_key TEXT,
      date_of_birth TEXT,
      name_key TEXT NOT NULL
    )`.execute(db)
    await sql`CREATE INDEX beneficiary_match_keys_email ON beneficiary_match_keys (email_key)`.execute(
      db,
    )
    await sql`CREATE INDEX beneficiary_match_keys_phone ON beneficiary_match_keys (phone_key)
      WHERE phone_key IS NOT NULL`.execute(db)
    // With the name: the records born on a date are compared by name without reading their rows.
    await sql`CREATE INDEX beneficiary_match_keys_birth
      ON beneficiary_match_keys (date_of_birth, name_key)
      WHERE date_of_birth IS NOT NULL`.execute(db)
    await sql`CREATE VIRTUAL TABLE beneficiary_match_names USING fts5(
      name_key, content = 'beneficiary_match_keys', content_rowid = 'id', tokenize = 'trigram'
    )`.execute(db)
    await sql`INSERT INTO beneficiary_match_names (beneficiary_match_names, rank)
        VALUES ('secure-delete', 1)`.execute(db)

    let after = 0
    for (;;) {
      const { rows } = await sql<{
        id: number
        first_name: string
        last_name: string
        email: string
        phone: string | null
        date_of_birth: string | null
      }>`SELECT id, first_name, last_name, email, phone, date_of_birth FROM beneficiaries
          WHERE id > ${after} ORDER BY id LIMIT ${BATCH}`.execute(db)
      if (rows.length === 0) break
      for (const row of rows) {
        const keys = storedMatchKeys(row)
        await sql`INSERT INTO beneficiary_match_keys (id, email_key, phone_key, date_of_birth, name_key)
          VALUES (${row.id}, ${keys.email_key}, ${keys.phone_key}, ${row.date_of_birth},
            ${keys.name_key})`.execute(db)
      }
      after = rows[rows.length - 1]!.id
    }
    await sql`INSERT INTO beneficiary_match_names (beneficiary_match_names)
        VALUES ('rebuild')`.execute(db)
  },
}
