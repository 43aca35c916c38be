import type pg from 'pg'
import type {
  PostgresPool,
  PostgresPoolClient,
  PostgresQueryConfig,
  PostgresQueryResult,
} from '../../../adapters/postgres/index.js'

/** A statement the adapter ran: its text and the values bound to it. */
export interface RecordedStatement {
  readonly text: string
  readonly values: readonly unknown[]
  /** Sent as a named statement: PostgreSQL may plan it once for every value (a generic plan). */
  readonly named: boolean
}

/**
 * A pool that keeps every statement the adapter runs through it, so that a test can ask
 * PostgreSQL how it plans them (`explain`).
 */
export class RecordingPool implements PostgresPool {
  readonly statements: RecordedStatement[] = []
  readonly #pool: pg.Pool

  constructor(pool: pg.Pool) {
    this.#pool = pool
  }

  /** Forgets what was recorded. */
  clear(): void {
    this.statements.length = 0
  }

  async query(config: PostgresQueryConfig): Promise<PostgresQueryResult<unknown>> {
    this.#record(config)
    return this.#pool.query(config as pg.QueryConfig)
  }

  async connect(): Promise<PostgresPoolClient> {
    const client = await this.#pool.connect()
    const record = (config: PostgresQueryConfig | string, values?: unknown[]): void => {
      if (typeof config !== 'string') this.#record(config)
      else if (values !== undefined) this.#record({ text: config, values })
    }
    return {
      query: ((config: PostgresQueryConfig | string, values?: unknown[]) => {
        record(config, values)
        return typeof config === 'string'
          ? client.query(config, values)
          : client.query(config as pg.QueryConfig)
      }) as PostgresPoolClient['query'],
      release: (error?: Error | boolean) => client.release(error),
    }
  }

  async end(): Promise<void> {
    // The pool is the test's.
  }

  #record(config: PostgresQueryConfig): void {
    if (/^\s*(SELECT|WITH|DELETE)\b/i.test(config.text)) {
      this.statements.push({
        text: config.text,
        values: config.values ?? [],
        named: config.name !== undefined,
      })
    }
  }
}

/** One node of a plan, as EXPLAIN (FORMAT JSON) gives it. */
interface PlanNode {
  readonly 'Node Type': string
  readonly 'Relation Name'?: string
  readonly 'Index Name'?: string
  readonly Plans?: readonly PlanNode[]
}

/** How PostgreSQL plans a statement, with the values it was run with: its nodes, flattened. */
export interface Explained {
  readonly statement: RecordedStatement
  /** `Node Type on relation using index`, depth first. */
  readonly nodes: readonly string[]
  /** Relations read by a sequential scan. */
  readonly seqScans: readonly string[]
  /** The plan as text, for reports. */
  readonly text: string
}

/**
 * EXPLAINs `statement` with its values: planned for them (a custom plan, as for an unnamed
 * statement), or with `generic`, once for any values, as PostgreSQL may plan a named statement
 * after its first five runs.
 */
export async function explain(
  pool: pg.Pool,
  statement: RecordedStatement,
  generic = false,
): Promise<Explained> {
  const values = [...statement.values]
  let json: pg.QueryResult
  let text: pg.QueryResult
  if (!generic) {
    json = await pool.query({ text: `EXPLAIN (FORMAT JSON) ${statement.text}`, values })
    text = await pool.query({ text: `EXPLAIN ${statement.text}`, values })
  } else {
    const client = await pool.connect()
    try {
      await client.query(`PREPARE explained AS ${statement.text}`)
      await client.query('SET plan_cache_mode = force_generic_plan')
      // EXECUTE takes no parameters of the protocol: its arguments are written out.
      const literal = (value: unknown): string =>
        value === null || value === undefined
          ? 'NULL'
          : client.escapeLiteral(Array.isArray(value) ? `{${value.join(',')}}` : String(value))
      const execute = `EXECUTE explained${values.length === 0 ? '' : `(${values.map(literal).join(', ')})`}`
      json = await client.query(`EXPLAIN (FORMAT JSON) ${execute}`)
      text = await client.query(`EXPLAIN ${execute}`)
    } finally {
      await client.query('DEALLOCATE explained').catch(() => undefined)
      await client.query('RESET plan_cache_mode').catch(() => undefined)
      client.release()
    }
  }
  const nodes: string[] = []
  const seqScans: string[] = []
  const walk = (node: PlanNode): void => {
    let label = node['Node Type']
    if (node['Relation Name'] !== undefined) label += ` on ${node['Relation Name']}`
    if (node['Index Name'] !== undefined) label += ` using ${node['Index Name']}`
    nodes.push(label)
    if (node['Node Type'] === 'Seq Scan') seqScans.push(node['Relation Name'] ?? '?')
    for (const child of node.Plans ?? []) walk(child)
  }
  const plan = (json.rows[0] as { 'QUERY PLAN': { Plan: PlanNode }[] })['QUERY PLAN'][0]!.Plan
  walk(plan)
  return {
    statement,
    nodes,
    seqScans,
    text: (text.rows as { 'QUERY PLAN': string }[]).map((row) => row['QUERY PLAN']).join('\n'),
  }
}
