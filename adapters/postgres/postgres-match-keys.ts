import { sql, type Migration } from 'kysely'
import type { BeneficiaryRecord } from '../../core/beneficiary.js'
import type { MatchQuery, MatchStore } from '../../core/ports/match-store.js'
import { RECORD_COLUMNS, recordOf } from './postgres-beneficiary-columns.js'
import { table } from './postgres-counters.js'
import type { PostgresPool } from './postgres-driver.js'
import { PostgresQuery, slot } from './postgres-query.js'

/** The folded full name (`nameMatchKey`) as the table has it: the two sort keys. */
const NAME_KEY = sql.raw(`(sort_first || ' ' || sort_last)`)

/** Least trigram similarity of the names of the records born on the candidate's dates. */
const BORN_SAME_DAY_SIMILARITY = 0.3

/**
 * Migration `0006_match_keys` (D38): the match keys as indexed expressions of the record's own
 * columns, which the database keeps in step with every write (the store's statements, batched
 * creates, bulk loads) and drops with the row: `lower(email)`; the phone in E.164 by
 * `match_phone`, which reads a number without `+` as Italian as the core does (`00` as the
 * international prefix); the date of birth; and the folded name (the two sort keys, the words
 * of `searchTerms()`) in a GiST index of `pg_trgm`, for similarity and nearest-name look-ups.
 * `pg_trgm` is created when missing, under an advisory lock so that two migrations of two
 * schemas of one database do not race to create it.
 */
export function matchKeysMigration(schema: string): Migration {
  const statements = [
    `SELECT pg_advisory_xact_lock(hashtext('beneficiary-service pg_trgm'))`,
    'CREATE EXTENSION IF NOT EXISTS pg_trgm',
    `CREATE FUNCTION %s.match_phone(phone text) RETURNS text
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      RETURN CASE WHEN phone LIKE '+%%' THEN phone
        WHEN phone LIKE '00%%' THEN '+' || substr(phone, 3)
        ELSE '+39' || phone END`,
    'CREATE INDEX beneficiaries_match_email ON %s.beneficiaries (lower(email))',
    `CREATE INDEX beneficiaries_match_phone ON %s.beneficiaries (%s.match_phone(phone))
      WHERE phone IS NOT NULL`,
    // With the columns of the folded name and the id: the records born on a date are compared by
    // name in an index-only scan, without visiting their rows.
    `CREATE INDEX beneficiaries_match_birth ON %s.beneficiaries (date_of_birth)
      INCLUDE (id, sort_first, sort_last) WHERE date_of_birth IS NOT NULL`,
    `CREATE INDEX beneficiaries_match_name ON %s.beneficiaries
      USING gist ((sort_first || ' ' || sort_last) gist_trgm_ops)`,
  ]
  return {
    async up(db) {
      for (const text of statements) {
        await sql.raw(text.replaceAll('%s.', `"${schema}".`).replaceAll('%%', '%')).execute(db)
      }
    },
  }
}

/**
 * Retrieval of possible duplicates on PostgreSQL (D38): one statement, one round trip, the
 * union of an index look-up per key (the fiscal code's unique index, the e-mail, phone and
 * date-of-birth expression indexes, and the GiST trigram index of the names for the nearest
 * ones); never a scan of the table.
 */
export class PostgresMatchStore implements MatchStore {
  readonly #pool: PostgresPool
  readonly #assertOpen: () => void
  readonly #select: PostgresQuery

  constructor(pool: PostgresPool, schema: string, assertOpen: () => void) {
    this.#pool = pool
    this.#assertOpen = assertOpen
    const beneficiaries = table(schema, 'beneficiaries')
    const limit = sql`${slot('limit')}::integer`
    const name = sql`${slot('name')}::text`
    this.#select = new PostgresQuery(sql`
      SELECT ${sql.join(RECORD_COLUMNS.map((column) => sql.ref(column)))}
      FROM ${beneficiaries}
      WHERE id IN (
        (SELECT id FROM ${beneficiaries} WHERE fiscal_code = ${slot('fiscal_code')}::text
          LIMIT ${limit})
        UNION (SELECT id FROM ${beneficiaries} WHERE lower(email) = ${slot('email')}::text
          LIMIT ${limit})
        UNION (SELECT id FROM ${beneficiaries}
          WHERE phone IS NOT NULL
            AND ${sql.raw(`"${schema}".match_phone(phone)`)} = ${slot('phone')}::text
          LIMIT ${limit})
        UNION (SELECT id FROM ${beneficiaries}
          WHERE date_of_birth = ANY (${slot('dates')}::text[])
            AND similarity(${NAME_KEY}, ${name}) >= ${BORN_SAME_DAY_SIMILARITY}
          LIMIT ${limit})
        UNION (SELECT id FROM ${beneficiaries}
          WHERE ${slot('nearest')}::boolean AND ${NAME_KEY} % ${name}
          ORDER BY ${NAME_KEY} <-> ${name} LIMIT ${limit})
      ) AND id IS DISTINCT FROM ${slot('exclude')}::bigint`)
  }

  async candidates(query: MatchQuery): Promise<readonly BeneficiaryRecord[]> {
    this.#assertOpen()
    const named = query.name !== undefined
    const rows = await this.#select.arrays(this.#pool, {
      fiscal_code: query.fiscalCode ?? null,
      email: query.email ?? null,
      phone: query.phone ?? null,
      name: query.name ?? null,
      dates: named ? (query.datesOfBirth ?? []) : [],
      nearest: named && query.nearestNames === true,
      exclude: query.excludeId ?? null,
      limit: query.limit,
    })
    return rows.map(recordOf)
  }
}
