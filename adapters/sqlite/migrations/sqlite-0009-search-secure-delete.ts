import { sql, type Migration } from 'kysely'

// A delete takes a record's words out of the search index itself, so that no name of an
// erased record stays readable in the file (D27). FTS5's `secure-delete` removes a row's
// entries from the segments that hold them, but not in a `contentless_delete` table, whose
// deletes only mark the row as gone until a merge drops it: the table becomes a plain
// contentless one, whose rows are deleted with their words (the `delete` command, which the
// store gives the old words and status). Made anew from the records, which also drops whatever
// the old segments kept of the records deleted before (`secure_delete` zeroes the pages
// freed). FTS5 older than SQLite 3.42 can no longer open the table.
export const searchSecureDelete: Migration = {
  async up(db) {
    await sql`DROP TABLE beneficiary_search`.execute(db)
    await sql`CREATE VIRTUAL TABLE beneficiary_search USING fts5(
      words, status, content = '', tokenize = 'ascii', prefix = '1 2 3'
    )`.execute(db)
    await sql`INSERT INTO beneficiary_search (beneficiary_search, rank)
        VALUES ('secure-delete', 1)`.execute(db)
    // The words as `nameKeys()` joins the two sort keys.
    await sql`INSERT INTO beneficiary_search (rowid, words, status)
        SELECT id, CASE WHEN sort_first <> '' AND sort_last <> ''
          THEN sort_first || ' ' || sort_last ELSE sort_first || sort_last END, status
        FROM beneficiaries ORDER BY id`.execute(db)
  },
}
