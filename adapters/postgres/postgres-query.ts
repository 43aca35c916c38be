import { createHash } from 'node:crypto'
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type Compilable,
  type RawBuilder,
} from 'kysely'
import { TYPES, type PostgresQueryConfig, type PostgresQueryResult } from './postgres-driver.js'
import type { PostgresSchema } from './postgres-schema.js'
import { translateStorageFailure } from './postgres-storage-failure.js'
import type { RelationalSchema } from '../relational/relational-schema.js'
import { bindSlots, type SlotValues } from '../relational/relational-slots.js'
import type { RelationalStatements } from '../relational/relational-statements.js'

export { slot, type SlotValues } from '../relational/relational-slots.js'

/** Builds SQL without a connection: Kysely only compiles here, node-postgres executes. */
export const queryBuilder = new Kysely<PostgresSchema>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
})

/** The builder for the tables of `schema`: every table name it writes is schema-qualified. */
export function builderFor(schema: string): Kysely<PostgresSchema> {
  return queryBuilder.withSchema(schema)
}

/** How the shared stores' statements run: each on `pool`, in the tables of `schema`. */
export function postgresStatements(pool: Queryable, schema: string): RelationalStatements {
  return {
    // PostgresSchema extends RelationalSchema; Kysely's type of the tables is invariant.
    builder: builderFor(schema) as unknown as Kysely<RelationalSchema>,
    read: (query) => {
      const statement = new PostgresQuery(query)
      return (values) => statement.arrays(pool, values)
    },
    write: (query) => {
      const statement = new PostgresQuery(query)
      return (values) => statement.run(pool, values)
    },
  }
}

/** Something that runs a query: a pool, or a connection checked out of it. */
export interface Queryable {
  query(config: PostgresQueryConfig): Promise<PostgresQueryResult<unknown>>
}

/** A statement to build once: a Kysely query, or a raw `sql` template. */
export type Statement = Compilable | RawBuilder<unknown>

/**
 * A statement compiled by Kysely once and prepared by each connection once, as a named
 * statement (its name is a hash of its text, so two storages on one pool, in two schemas,
 * never collide); each run only binds values. A storage fault (unreachable, shutting down,
 * a timeout) is thrown as the domain's `StorageUnavailableError`.
 *
 * With `named: false` the statement is sent unnamed instead, and PostgreSQL plans it again at
 * every run with the values bound: for statements whose best plan depends on them.
 */
export class PostgresQuery<Row = unknown> {
  readonly sql: string
  readonly #name: string | undefined
  readonly #parameters: readonly unknown[]

  constructor(query: Statement, options: { readonly named?: boolean } = {}) {
    const compiled = 'isRawBuilder' in query ? query.compile(queryBuilder) : query.compile()
    this.sql = compiled.sql
    this.#parameters = compiled.parameters
    this.#name =
      options.named === false
        ? undefined
        : `bs_${createHash('sha256').update(compiled.sql).digest('base64url').slice(0, 22)}`
  }

  /** Every row, as objects named by column. */
  async rows(db: Queryable, values: SlotValues = {}): Promise<Row[]> {
    return (await this.#run(db, values, false)).rows as Row[]
  }

  /** The first row as an object, or `undefined`. */
  async row(db: Queryable, values: SlotValues = {}): Promise<Row | undefined> {
    return (await this.rows(db, values))[0]
  }

  /**
   * Every row as an array of its column values, in the order of the select: cheaper than
   * `rows` for wide rows, as the driver then builds no object per row.
   */
  async arrays(db: Queryable, values: SlotValues = {}): Promise<unknown[][]> {
    return (await this.#run(db, values, true)).rows as unknown[][]
  }

  /** Runs the statement; resolves to the number of rows it affected. */
  async run(db: Queryable, values: SlotValues = {}): Promise<number> {
    return (await this.#run(db, values, true)).rowCount ?? 0
  }

  /** The query as node-postgres takes it, for these slot values. */
  config(values: SlotValues, arrays: boolean): PostgresQueryConfig {
    return {
      ...(this.#name !== undefined && { name: this.#name }),
      text: this.sql,
      values: bindSlots(this.#parameters, values),
      types: TYPES,
      ...(arrays && { rowMode: 'array' as const }),
    }
  }

  async #run(
    db: Queryable,
    values: SlotValues,
    arrays: boolean,
  ): Promise<PostgresQueryResult<unknown>> {
    try {
      return await db.query(this.config(values, arrays))
    } catch (error) {
      throw translateStorageFailure(error)
    }
  }
}
