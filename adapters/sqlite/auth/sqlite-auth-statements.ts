import type BetterSqlite3 from 'better-sqlite3'
import type { Compilable, Kysely } from 'kysely'
import type { RelationalSchema } from '../../relational/relational-schema.js'
import { bindSlots, type SlotValues } from '../../relational/relational-slots.js'
import type {
  RelationalStatements,
  RelationalWrite,
} from '../../relational/relational-statements.js'
import { queryBuilder, SqliteQuery, translateStorageFailure } from '../sqlite-query.js'
import type { SqlStatement, SqliteWrites } from '../threads/sqlite-writer-protocol.js'

/**
 * Runs the statements of the shared stores of clients, sessions and signing keys on SQLite: a
 * read synchronously on the connection, as a prepared statement; a write in a `BEGIN IMMEDIATE`
 * transaction of its own, on the writer thread when the storage has one (the thread runs it
 * with {@link runStatements} on its connection), else on the connection.
 */
export class SqliteAuthStatements implements RelationalStatements {
  // SqliteSchema extends RelationalSchema; Kysely's type of the tables is invariant.
  readonly builder = queryBuilder as unknown as Kysely<RelationalSchema>
  readonly #db: BetterSqlite3.Database
  readonly #writer: SqliteWrites | undefined
  readonly #prepared = new Map<string, BetterSqlite3.Statement>()
  readonly #transaction: BetterSqlite3.Transaction<
    (statements: readonly SqlStatement[]) => number[]
  >

  /**
   * @param db An open connection whose schema `migrateSqlite` brought up to date.
   * @param writer Where the writes run when given: the writer thread (`SqliteWriterThread`).
   */
  constructor(db: BetterSqlite3.Database, writer?: SqliteWrites) {
    this.#db = db
    this.#writer = writer
    this.#transaction = db.transaction((statements) =>
      statements.map(([text, parameters]) => this.#prepare(text).run(...parameters).changes),
    )
  }

  read(query: Compilable): (values?: SlotValues) => unknown[][] {
    const statement = new SqliteQuery(this.#db, query)
    return (values) => statement.allValues(values)
  }

  write(query: Compilable): RelationalWrite {
    const bind = this.bound(query)
    return async (values = {}) => (await this.transaction([bind(values)]))[0]!
  }

  /** `query`, compiled and prepared once; each call gives its text with `values` bound. */
  bound(query: Compilable): (values: SlotValues) => SqlStatement {
    const { sql, parameters } = query.compile()
    this.#prepare(sql)
    return (values) => [sql, bindSlots(parameters, values)]
  }

  /**
   * Runs `statements` in order in one `BEGIN IMMEDIATE` transaction, on the writer thread when
   * there is one; the number of rows each changed.
   */
  transaction(statements: readonly SqlStatement[]): number[] | Promise<number[]> {
    return this.#writer?.runStatements(statements) ?? this.runStatements(statements)
  }

  /** {@link transaction} on this connection. */
  runStatements(statements: readonly SqlStatement[]): number[] {
    try {
      return this.#transaction.immediate(statements)
    } catch (error) {
      throw translateStorageFailure(error)
    }
  }

  #prepare(text: string): BetterSqlite3.Statement {
    let statement = this.#prepared.get(text)
    if (statement === undefined) {
      statement = this.#db.prepare(text)
      this.#prepared.set(text, statement)
    }
    return statement
  }
}
