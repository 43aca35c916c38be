/** The help texts of `import` and `export`. */

const DB = `  --db PATH           SQLite database file, created with its folder when missing
                      (env DATABASE_PATH, default ./data/beneficiaries.sqlite)
  --database-url URL  A PostgreSQL database instead, postgres://user:password@host/db
                      (env DATABASE_URL; prefer the environment for a password)
  -h, --help          Show this help`

export const IMPORT_HELP = `Usage: beneficiaries import --file FILE [options]

Creates a beneficiary for every valid row of FILE: CSV with a header row (comma or semicolon
separated, as Excel writes it; UTF-8 with or without a byte order mark) or NDJSON, one JSON
object per line. Every row is validated as POST /v3/beneficiaries validates a body, and
written as a create is, with its history entry, many rows to a transaction. Every row's
outcome is written as one JSON line: created with its id, already created by an earlier run
of the same import, or refused with the error body a POST would have been answered.

Stopped or crashed, the same command resumes: each row is claimed under the import's id in
the transaction that creates it, so no row is created twice, and the same file imported again
creates nothing. Memory stays the same whatever the size of the file. Standard error shows how
far it is: a bar on a terminal, otherwise a line every five seconds. See docs/bulk.md for the
columns.

Options:
  --file FILE         The file to import
  --format NAME       csv or ndjson (default: NDJSON when the file starts with "{", else CSV)
  --report FILE       Write the rows' outcomes to FILE instead of standard output; standard
                      output then gets a summary as JSON
  --import-id ID      The import's id (default: the file's SHA-256): the same id resumes
  --ignore-assigned   Drop id, status, created_at and updated_at from every row (to import an
                      export); without it they are refused, as a POST refuses them
  --batch-size N      Rows written together, 1 to 10,000 (default 1,000)
${DB}`

export const EXPORT_HELP = `Usage: beneficiaries export [options]

Writes every beneficiary of one consistent snapshot of the database, in id order, as NDJSON
(one detail object per line, as GET /v3/beneficiaries/{id} answers it) or CSV (the columns an
import reads). Writes made during the export are not in it. Memory stays the same whatever the
number of records.

Options:
  --format NAME       ndjson or csv (default ndjson)
  --out FILE          Write to FILE instead of standard output
  --status STATUS     Only records with this status
  --created-from DAY  Only records created on or after this day, YYYY-MM-DD (UTC)
  --created-to DAY    Only records created on or before this day, YYYY-MM-DD (UTC)
  --search TEXT       Only records whose names match, as the list's search does
${DB}`
