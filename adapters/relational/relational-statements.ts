import type { Compilable, Kysely } from 'kysely'
import type { RelationalSchema } from './relational-schema.js'
import type { SlotValues } from './relational-slots.js'

/** A read built once: every row it selects, as its column values in the order of the select. */
export type RelationalRead = (values?: SlotValues) => unknown[][] | Promise<unknown[][]>

/** A write built once: runs it, and gives the number of rows it changed. */
export type RelationalWrite = (values?: SlotValues) => number | Promise<number>

/**
 * How an adapter runs the statements of the shared stores (`RelationalClientStore`,
 * `RelationalSessionStore`, `RelationalSigningKeyStore`), which define them once: SQLite runs a
 * read synchronously on its connection and a write on its writer thread when it has one,
 * PostgreSQL runs both on its pool. The stores await either.
 */
export interface RelationalStatements {
  /** The builder of the statements, in the adapter's dialect and schema: it only compiles. */
  readonly builder: Kysely<RelationalSchema>
  /** `query`, compiled and prepared once, as a read; its slots take the values of each run. */
  read(query: Compilable): RelationalRead
  /** `query`, compiled and prepared once, as a write; its slots take the values of each run. */
  write(query: Compilable): RelationalWrite
}
