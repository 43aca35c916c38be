import type BetterSqlite3 from 'better-sqlite3'
import {
  DummyDriver,
  Kysely,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type Compilable,
} from 'kysely'
import { StorageUnavailableError, type StorageFailureReason } from '../../core/errors.js'
import type { SqliteSchema } from './sqlite-schema.js'
import { bindSlots, type SlotValues } from '../relational/relational-slots.js'

export { slot, type SlotValues } from '../relational/relational-slots.js'

/** Builds SQL without a connection: Kysely only compiles here, better-sqlite3 executes. */
export const queryBuilder = new Kysely<SqliteSchema>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  },
})

/**
 * A query compiled by Kysely once and prepared by better-sqlite3 once; each run only binds
 * values. Parameters that are not slots are constants of the query and bound as they are. A
 * storage fault (busy, disk full, read-only, I/O) is thrown as the domain's
 * `StorageUnavailableError`.
 */
export class SqliteQuery<Row> {
  readonly sql: string
  readonly #statement: BetterSqlite3.Statement<unknown[], Row>
  readonly #parameters: readonly unknown[]
  #rawStatement: BetterSqlite3.Statement<unknown[], unknown[]> | undefined

  constructor(db: BetterSqlite3.Database, query: Compilable) {
    const compiled = query.compile()
    this.sql = compiled.sql
    this.#parameters = compiled.parameters
    this.#statement = db.prepare<unknown[], Row>(compiled.sql)
  }

  /** Every row. */
  all(values: SlotValues = {}): Row[] {
    try {
      return this.#statement.all(...bindSlots(this.#parameters, values))
    } catch (error) {
      throw translateStorageFailure(error)
    }
  }

  /**
   * Every row as an array of its column values, in the order of the select: cheaper than `all`
   * when many rows come back, as the driver then builds no object per row.
   */
  allValues(values: SlotValues = {}): unknown[][] {
    try {
      return this.#raw().all(...bindSlots(this.#parameters, values))
    } catch (error) {
      throw translateStorageFailure(error)
    }
  }

  /**
   * The first row as an array of its column values, in the order of the select, or
   * `undefined`: cheaper than `get` for a wide row, as the driver then builds no object.
   */
  getValues(values: SlotValues = {}): unknown[] | undefined {
    try {
      return this.#raw().get(...bindSlots(this.#parameters, values))
    } catch (error) {
      throw translateStorageFailure(error)
    }
  }

  /** The first row, or `undefined`. */
  get(values: SlotValues = {}): Row | undefined {
    try {
      return this.#statement.get(...bindSlots(this.#parameters, values))
    } catch (error) {
      throw translateStorageFailure(error)
    }
  }

  /** Runs a statement that returns no rows. */
  run(values: SlotValues = {}): BetterSqlite3.RunResult {
    try {
      return this.#statement.run(...bindSlots(this.#parameters, values))
    } catch (error) {
      throw translateStorageFailure(error)
    }
  }

  #raw(): BetterSqlite3.Statement<unknown[], unknown[]> {
    this.#rawStatement ??= this.#statement.database
      .prepare<unknown[], unknown[]>(this.sql)
      .raw(true)
    return this.#rawStatement
  }
}

/** Primary result codes of SQLite that say the machine, not the request, is at fault. */
const REASONS: ReadonlyMap<string, StorageFailureReason> = new Map([
  ['SQLITE_BUSY', 'busy'],
  ['SQLITE_FULL', 'disk_full'],
  ['SQLITE_READONLY', 'read_only'],
  ['SQLITE_IOERR', 'io_error'],
  ['SQLITE_CANTOPEN', 'cannot_open'],
])

/**
 * The domain's `StorageUnavailableError` for a driver error whose code is one of SQLite's storage
 * faults (`SQLITE_BUSY` past the busy timeout, `SQLITE_FULL`, `SQLITE_READONLY*`,
 * `SQLITE_IOERR*`, `SQLITE_CANTOPEN*`), the driver error kept as its `cause`; any other error as
 * it is.
 */
export function translateStorageFailure(error: unknown): unknown {
  const code = (error as { code?: unknown } | null | undefined)?.code
  if (typeof code !== 'string' || !code.startsWith('SQLITE_')) return error
  const extended = code.indexOf('_', 7)
  const reason = REASONS.get(extended === -1 ? code : code.slice(0, extended))
  return reason === undefined ? error : new StorageUnavailableError(reason, { cause: error })
}
