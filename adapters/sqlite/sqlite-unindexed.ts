import { sql, type RawBuilder } from 'kysely'

/** `+column`: the same value, but SQLite will not use an index for it, which picks the plan. */
export function unindexed<T>(column: string): RawBuilder<T> {
  return sql<T>`+${sql.ref(`beneficiaries.${column}`)}`
}
