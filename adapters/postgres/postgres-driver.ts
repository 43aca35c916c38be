/**
 * The slice of node-postgres (`pg`) the adapter uses, typed here so that the adapter's types do
 * not need `@types/pg`: a `pg.Pool` fits {@link PostgresPool}, and so does any pool with the
 * same methods.
 */
import { importWithPeers, type PeerPackage } from '../../core/missing-peer-dependency-error.js'
import { KYSELY_PEER } from '../relational/relational-peers.js'

/** Parses a column's text value; chosen by the column type's OID. */
export type PostgresTypeParser = (value: string) => unknown

/** Per-query type parsers, as node-postgres's `types` query option takes them. */
export interface PostgresTypes {
  getTypeParser(oid: number, format?: 'text'): PostgresTypeParser
}

/** A query as node-postgres's `query(config)` takes it. */
export interface PostgresQueryConfig {
  readonly text: string
  readonly values?: unknown[]
  /** A named statement is prepared once per connection and only bound afterwards. */
  readonly name?: string
  readonly rowMode?: 'array'
  readonly types?: PostgresTypes
  /** node-postgres's client-side read timeout for this query, in ms, in place of the pool's. */
  readonly query_timeout?: number
}

/** What node-postgres's `query` resolves to. */
export interface PostgresQueryResult<R> {
  readonly rows: R[]
  readonly rowCount: number | null
}

/** A connection checked out of a pool (node-postgres's `PoolClient`). */
export interface PostgresPoolClient {
  query(config: PostgresQueryConfig): Promise<PostgresQueryResult<unknown>>
  query(text: string, values?: unknown[]): Promise<PostgresQueryResult<unknown>>
  /** Returns the connection to the pool; with an error (or `true`), destroys it instead. */
  release(error?: Error | boolean): void
}

/** A pool of connections (node-postgres's `Pool`). */
export interface PostgresPool {
  query(config: PostgresQueryConfig): Promise<PostgresQueryResult<unknown>>
  connect(): Promise<PostgresPoolClient>
  end(): Promise<void>
}

/** What `openPostgresStorage` needs of the `pg` module: its `Pool` constructor. */
export interface PgModule {
  readonly Pool: new (config: Record<string, unknown>) => PostgresPool & {
    on(event: 'error', listener: (error: Error) => void): unknown
  }
}

/**
 * What the PostgreSQL adapter needs the host to install: node-postgres and Kysely, with their
 * `peerDependencies` ranges in `package.json` (a test holds the two equal).
 */
export const POSTGRES_PEERS: readonly PeerPackage[] = Object.freeze([
  KYSELY_PEER,
  Object.freeze({ name: 'pg', range: '^8.11.0' }),
])

/**
 * Loads node-postgres, an optional peer dependency: a host that uses only the core, another
 * adapter, or a pool of its own, never loads it.
 * @throws MissingPeerDependencyError naming the packages to install when `pg` is missing.
 */
export async function loadPg(): Promise<PgModule> {
  // A variable, not a literal: the compiler must not require the package's types.
  const name = 'pg'
  const loaded = await importWithPeers(
    'beneficiary-service/postgres',
    POSTGRES_PEERS,
    () => import(name) as Promise<{ default?: PgModule } & Partial<PgModule>>,
  )
  const module = loaded.default ?? loaded
  if (typeof module.Pool !== 'function') {
    throw new Error(
      'The "pg" package does not export Pool: install node-postgres 8 (npm install pg)',
    )
  }
  return module as PgModule
}

const toNumber: PostgresTypeParser = (value) => Number(value)
const toBoolean: PostgresTypeParser = (value) => value === 't'
const asText: PostgresTypeParser = (value) => value

// int8, int2, int4, float4, float8, bool. Every other type (text, json, tsvector) stays text.
const PARSERS: ReadonlyMap<number, PostgresTypeParser> = new Map([
  [20, toNumber],
  [21, toNumber],
  [23, toNumber],
  [700, toNumber],
  [701, toNumber],
  [16, toBoolean],
])

/**
 * The adapter's type parsers, passed with every query rather than set on the `pg` module, so a
 * host's own queries on a shared pool keep theirs. `bigint` columns (ids, epoch milliseconds,
 * counts) become numbers: every value the adapter stores is a safe integer.
 */
export const TYPES: PostgresTypes = Object.freeze({
  getTypeParser: (oid: number) => PARSERS.get(oid) ?? asText,
})
