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
    if (/^\s*(SELECT|WITH)\b/i.test(config.text)) {
      this.statements.push({ text: config.text, values: config.values ?? [] })
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

/** EXPLAINs `statement` with its values (a custom plan, as for an unnamed statement). */
export async function explain(pool: pg.Pool, statement: RecordedStatement): Promise<Explained> {
  const values = [...statement.values]
  const json = await pool.query({ text: `EXPLAIN (FORMAT JSON) ${statement.text}`, values })
  const text = await pool.query({ text: `EXPLAIN ${statement.text}`, values })
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
