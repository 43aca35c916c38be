import { sql } from 'kysely'
import type { BeneficiaryRecord, BeneficiarySummary, HistoryEntry } from '../../core/beneficiary.js'
import type {
  BeneficiaryStore,
  CreateOutcome,
  IdempotencyClaim,
  ListQuery,
  NewBeneficiary,
  Page,
  TokenIdentity,
  TokenRead,
  WriteOutcome,
} from '../../core/ports/beneficiary-store.js'
import { toRecordFrom } from '../relational/relational-beneficiary-columns.js'
import { RECORD_COLUMNS, recordOf, sortKeys, toColumns } from './postgres-beneficiary-columns.js'
import { PostgresBatcher, type Batching } from './postgres-batcher.js'
import { PostgresBeneficiaryList } from './postgres-beneficiary-list.js'
import { PostgresBeneficiaryWrites } from './postgres-beneficiary-writes.js'
import { PostgresCreates, type CreateResult } from './postgres-create-batch.js'
import { table } from './postgres-counters.js'
import type { PostgresPool } from './postgres-driver.js'
import { entryValues } from '../relational/relational-history.js'
import { PostgresHistory } from './postgres-history.js'
import { claimValues, PostgresIdempotencyClaims } from './postgres-idempotency-claims.js'
import { PostgresQuery, slot } from './postgres-query.js'
import { tokenActive } from './postgres-session-tokens.js'
import { translateWriteFailure } from './postgres-storage-failure.js'

/** How often a create that found a live claim gone before it could read it starts over. */
const CLAIM_ATTEMPTS = 3

/**
 * Beneficiaries, their history (D27) and Idempotency-Key claims (D22) in PostgreSQL. Every
 * write is one statement, so one round trip and one transaction, in autocommit: the record,
 * its history entry, its counters and the claim are written together or not at all. Updates
 * and deletes are compare-and-swap on `version` (D23) in their WHERE clause.
 *
 * Beyond the port: ids are never reused (a sequence); the `createdAt` of a `claimed` outcome is
 * the `created_at` of the record the claim created; `last_name`/`first_name` sort by the name's
 * search words, then the raw name, both in code-point order (`COLLATE "C"`), then id, as the
 * memory adapter does.
 *
 * Get one from `PostgresStorage`; it is not constructed on its own.
 */
export class PostgresBeneficiaryStore implements BeneficiaryStore {
  readonly #pool: PostgresPool
  readonly #assertOpen: () => void
  readonly #track: (work: Promise<void>) => void
  readonly #select: PostgresQuery
  readonly #selectForToken: PostgresQuery
  readonly #selectManyForToken: PostgresQuery
  readonly #reads: PostgresBatcher<Read, TokenRead>
  readonly #writes: PostgresBeneficiaryWrites
  readonly #creates: PostgresCreates
  readonly #history: PostgresHistory
  readonly #claims: PostgresIdempotencyClaims
  readonly #list: PostgresBeneficiaryList

  /**
   * @param pool Where every statement runs.
   * @param schema The schema of the tables, migrated.
   * @param assertOpen Throws when the owning storage is closed; called first by every method.
   * @param track Keeps background work (the purge of expired claims) for `close` to wait on.
   * @param listTimeoutMs The time budget of each list statement (see `PostgresBeneficiaryList`).
   */
  constructor(
    pool: PostgresPool,
    schema: string,
    assertOpen: () => void,
    track: (work: Promise<void>) => void,
    batching: Batching,
    listTimeoutMs: number,
  ) {
    this.#pool = pool
    this.#assertOpen = assertOpen
    this.#track = track
    this.#select = new PostgresQuery(sql`
      SELECT ${sql.join(RECORD_COLUMNS.map((column) => sql.ref(column)))}
      FROM ${table(schema, 'beneficiaries')} WHERE id = ${slot('id')}`)
    // The record's columns, null when it is missing or the token is not active, then whether
    // the token is: one row always, one round trip.
    this.#selectForToken = new PostgresQuery(sql`
      SELECT ${sql.join(RECORD_COLUMNS.map((column) => sql.ref(`b.${column}`)))}, t.active
      FROM (SELECT ${tokenActive(schema)} AS active) t
      LEFT JOIN ${table(schema, 'beneficiaries')} b ON t.active AND b.id = ${slot('id')}`)
    // The same for many reads at once, one row per read in their order (see `PostgresBatcher`).
    this.#selectManyForToken = new PostgresQuery(sql`
      SELECT ${sql.join(RECORD_COLUMNS.map((column) => sql.ref(`b.${column}`)))}, t.active
      FROM unnest(
          ${slot('ids')}::bigint[], ${slot('sids')}::text[], ${slot('jtis')}::text[],
          ${slot('subs')}::text[]
        ) WITH ORDINALITY AS q(id, sid, jti, sub, n)
      CROSS JOIN LATERAL (SELECT ${tokenActive(schema, sql`q.sid`, sql`q.jti`, sql`q.sub`)} AS active) t
      LEFT JOIN ${table(schema, 'beneficiaries')} b ON t.active AND b.id = q.id
      ORDER BY q.n`)
    this.#reads = new PostgresBatcher((reads) => this.#readAll(reads), batching.limits, {
      onSend: (size) => batching.observe('read', size),
    })
    this.#writes = new PostgresBeneficiaryWrites(schema)
    this.#creates = new PostgresCreates(pool, schema, this.#writes, batching)
    this.#history = new PostgresHistory(schema)
    this.#claims = new PostgresIdempotencyClaims(schema)
    this.#list = new PostgresBeneficiaryList(pool, schema, listTimeoutMs)
  }

  /** The record with this id, or `undefined`: one round trip, a prepared statement. */
  async get(id: number): Promise<BeneficiaryRecord | undefined> {
    this.#assertOpen()
    const values = (await this.#select.arrays(this.#pool, { id }))[0]
    return values === undefined ? undefined : recordOf(values)
  }

  /** `get` and `SessionStore.isTokenActive` in one statement, so one round trip. */
  async getForToken(id: number, token: TokenIdentity): Promise<TokenRead> {
    this.#assertOpen()
    return this.#reads.submit({ id, token })
  }

  /** The reads of one batch: one statement for one, another for many. */
  async #readAll(reads: readonly Read[]): Promise<TokenRead[]> {
    if (reads.length === 1) {
      const { id, token } = reads[0]!
      const values = { id, sid: token.sessionId, jti: token.jti, sub: token.clientId }
      return [tokenReadOf((await this.#selectForToken.arrays(this.#pool, values))[0]!)]
    }
    const rows = await this.#selectManyForToken.arrays(this.#pool, {
      ids: reads.map((read) => read.id),
      sids: reads.map((read) => read.token.sessionId),
      jtis: reads.map((read) => read.token.jti),
      subs: reads.map((read) => read.token.clientId),
    })
    return rows.map(tokenReadOf)
  }

  /** One page of summaries matching `query`, with the exact total count. */
  async list(query: ListQuery): Promise<Page<BeneficiarySummary>> {
    this.#assertOpen()
    return this.#list.list(query)
  }

  /**
   * Inserts the record (id from the sequence, version 1), its `created` entry, its counters and
   * the claim, in one statement. A live claim for the same client and key wins over everything
   * else, including a fiscal code that is now taken by the claim's own record.
   *
   * @throws ConflictError `validation_failed` with `field` `fiscal_code` when another record
   * has the fiscal code; nothing is written then.
   */
  async create(
    record: NewBeneficiary,
    entry: HistoryEntry,
    idempotency?: IdempotencyClaim,
  ): Promise<CreateOutcome> {
    this.#assertOpen()
    const values = { ...toColumns(record, 1, sortKeys(record)), ...entryValues(entry) }
    try {
      if (idempotency === undefined) {
        const id = idOf(await this.#creates.submit({ values, claimed: false }))
        this.#list.noteWrite()
        return { kind: 'created', record: toRecordFrom(record, id!) }
      }
      const claimed = { values: { ...values, ...claimValues(idempotency) }, claimed: true }
      for (let attempt = 1; ; attempt++) {
        // A create that found a claim in its way tries again alone, with its own clock.
        const id = idOf(
          await (attempt === 1 ? this.#creates.submit(claimed) : this.#creates.one(claimed)),
        )
        if (id !== undefined) {
          this.#list.noteWrite()
          if (this.#claims.purgeDue()) this.#purge(idempotency.now)
          return { kind: 'created', record: toRecordFrom(record, id) }
        }
        // A live claim kept the create from writing; a new statement sees it committed.
        const held = await this.#claims.held(this.#pool, idempotency)
        if (held !== undefined || attempt >= CLAIM_ATTEMPTS) {
          if (held !== undefined) return held
          throw new Error('the Idempotency-Key claim kept changing; try again')
        }
      }
    } catch (error) {
      throw translateWriteFailure(error)
    }
  }

  /**
   * Replaces the record and appends `entry` when the stored version is `previous.version`.
   * `next` is stored as given: the caller sets its version. The record is not read first: the
   * counters move from what `previous` says, and the UPDATE itself checks the version.
   *
   * @throws ConflictError `validation_failed` with `field` `fiscal_code` when another record has
   * `next`'s fiscal code; nothing is written then.
   */
  async update(
    previous: BeneficiaryRecord,
    next: BeneficiaryRecord,
    entry: HistoryEntry,
  ): Promise<WriteOutcome> {
    this.#assertOpen()
    const renamed = previous.first_name !== next.first_name || previous.last_name !== next.last_name
    // Only a new name or status can change what a search finds.
    const searched = renamed || previous.status !== next.status
    const after = sortKeys(next)
    const before = renamed ? sortKeys(previous) : after
    const values = PostgresBeneficiaryWrites.updateValues(
      previous,
      toColumns(next, next.version, after),
      {
        ...before,
        status: previous.status,
        created_at: previous.created_at,
        updated_at: previous.updated_at,
      },
      searched,
    )
    try {
      const rows = await this.#writes.update.arrays(this.#pool, {
        ...values,
        ...entryValues(entry),
      })
      if (rows.length === 0) return this.#missingOrConflict(next.id)
      if (searched) this.#list.noteWrite()
      return 'done'
    } catch (error) {
      throw translateWriteFailure(error)
    }
  }

  /**
   * Deletes the record, empties the `changes` of its earlier history entries and appends
   * `entry`, in one statement; the fiscal code becomes free (D13, D27).
   */
  async remove(
    id: number,
    expectedVersion: number | undefined,
    entry: HistoryEntry,
  ): Promise<WriteOutcome> {
    this.#assertOpen()
    if (expectedVersion === undefined) return this.#removeCurrent(id, entry)
    const values = { id, expected_version: expectedVersion, ...entryValues(entry) }
    try {
      const rows = await this.#writes.remove.arrays(this.#pool, values)
      if (rows.length === 0) return this.#missingOrConflict(id)
      this.#list.noteWrite()
      return 'done'
    } catch (error) {
      throw translateWriteFailure(error)
    }
  }

  /** A page of the record's history, oldest first; `undefined` once the record is deleted. */
  async history(
    id: number,
    offset: number,
    limit: number,
  ): Promise<Page<HistoryEntry> | undefined> {
    this.#assertOpen()
    return this.#history.page(this.#pool, id, offset, limit)
  }

  /**
   * Every history entry kept for `id`, oldest first, including those of a deleted record (then
   * erased: empty `changes`, ending with the `deleted` entry), for audits and tests. Not part of
   * the port. `undefined` when no record ever had this id.
   */
  async retainedHistory(id: number): Promise<readonly HistoryEntry[] | undefined> {
    this.#assertOpen()
    return this.#history.all(this.#pool, id)
  }

  /**
   * A delete without If-Match, as a compare-and-swap on the version it read: a delete that
   * waited for another change of the record then finds the version moved, and starts again in
   * a new transaction. So its transaction id is taken after the other change committed, and the
   * change feed keeps the record's events in order (see `PostgresEventLog`); an unconditional
   * DELETE takes its transaction id before it waits for the row.
   */
  async #removeCurrent(id: number, entry: HistoryEntry): Promise<WriteOutcome> {
    try {
      for (let attempt = 0; ; attempt++) {
        const found = await this.#writes.version.arrays(this.#pool, { id })
        if (found.length === 0) return 'missing'
        const expected = Number(found[0]![0])
        const values = { id, expected_version: expected, ...entryValues(entry) }
        const rows = await this.#writes.remove.arrays(this.#pool, values)
        if (rows.length > 0) {
          this.#list.noteWrite()
          return 'done'
        }
        if (attempt >= 100) return this.#missingOrConflict(id)
      }
    } catch (error) {
      throw translateWriteFailure(error)
    }
  }

  async #missingOrConflict(id: number): Promise<WriteOutcome> {
    const rows = await this.#writes.version.arrays(this.#pool, { id })
    return rows.length === 0 ? 'missing' : 'conflict'
  }

  /** Purges expired claims in the background: the create it follows has already committed. */
  #purge(now: number): void {
    this.#track(this.#claims.purge(this.#pool, now).catch(() => undefined))
  }
}

/** The id a create wrote, `undefined` when a claim held its key; throws what kept it from writing. */
function idOf(result: CreateResult): number | undefined {
  if ('error' in result) throw result.error
  return result.id
}

/** A read of `getForToken`, waiting for its batch. */
interface Read {
  readonly id: number
  readonly token: TokenIdentity
}

/** The record's columns then whether the token is active, as a `getForToken` row holds them. */
function tokenReadOf(values: readonly unknown[]): TokenRead {
  if (values[RECORD_COLUMNS.length] !== true) return { active: false }
  return { active: true, record: values[0] === null ? undefined : recordOf(values) }
}
