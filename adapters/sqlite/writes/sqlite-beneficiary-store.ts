import type BetterSqlite3 from 'better-sqlite3'
import type { Selectable } from 'kysely'
import type {
  BeneficiaryRecord,
  BeneficiarySummary,
  HistoryEntry,
} from '../../../core/beneficiary.js'
import { ConflictError } from '../../../core/errors.js'
import type {
  BeneficiaryStore,
  CreateOutcome,
  IdempotencyClaim,
  ListQuery,
  NewBeneficiary,
  Page,
  WriteOutcome,
} from '../../../core/ports/beneficiary-store.js'
import { SqliteBeneficiaryList } from '../listing/sqlite-beneficiary-list.js'
import type { SqliteGroupCommit } from './sqlite-group-commit.js'
import { countedOf, SqliteCounters } from './sqlite-counters.js'
import type { SqliteDataVersion } from '../sqlite-data-version.js'
import { SqliteHistory } from './sqlite-history.js'
import { SqliteErasure } from './sqlite-erasure.js'
import { SqliteIdempotencyClaims } from './sqlite-idempotency-claims.js'
import { SqliteStatistics } from './sqlite-statistics.js'
import { SqliteMatchKeyWrites } from '../sqlite-match-keys.js'
import { queryBuilder, slot, SqliteQuery } from '../sqlite-query.js'
import {
  beneficiarySlots,
  nameKeys,
  prepareWriteStatements,
  RECORD_COLUMNS,
  recordOf,
  toColumns,
  toRecordFrom,
  type NameKeys,
} from './sqlite-beneficiary-columns.js'
import type { SqliteWrites } from '../threads/sqlite-writer-protocol.js'
import type { BeneficiaryRow } from '../sqlite-schema.js'

// Design: Kysely builds the SQL of every statement once, here in the constructor (or once per
// list shape), and better-sqlite3 prepares it once; a call only binds values and steps the
// prepared statement. Compiling a Kysely query costs tens of microseconds per call, more than
// the indexed lookup itself, so no query is built on the hot path.

/** What a write checks and recounts of the stored record. */
const CURRENT_COLUMNS = [
  'id',
  'version',
  'first_name',
  'last_name',
  'status',
  'created_at',
  'updated_at',
  'sort_first',
  'sort_last',
] as const
type CurrentRow = Pick<Selectable<BeneficiaryRow>, (typeof CURRENT_COLUMNS)[number]>

type SortKeys = Pick<NameKeys, 'sort_first' | 'sort_last'>

/** The stand-in sort keys of an update that keeps the names and the status (see `#updateNow`). */
const KEPT_KEYS: SortKeys = { sort_first: '', sort_last: '' }

/**
 * Beneficiaries, their history (D27) and Idempotency-Key claims (D22) in SQLite. Every write
 * runs in a `BEGIN IMMEDIATE` transaction, so it waits for another process's write instead of
 * failing on a read-to-write upgrade, and it is committed before the returned promise resolves.
 * Writes of one event-loop turn share that transaction, each in its own savepoint (group
 * commit, `SqliteGroupCommit`): one fsync for all of them.
 *
 * Beyond the port: ids are never reused (AUTOINCREMENT); the `createdAt` of a `claimed` outcome
 * is the `created_at` of the record the claim created; `last_name`/`first_name` sort by the
 * name's search words, then the raw name, both in code-point order, then id, as the memory
 * adapter does.
 *
 * Get one from `SqliteStorage`; it is not constructed on its own.
 */
export class SqliteBeneficiaryStore implements BeneficiaryStore {
  readonly #assertOpen: () => void
  readonly #writes: SqliteGroupCommit
  readonly #writer: SqliteWrites | undefined
  readonly #list: SqliteBeneficiaryList
  readonly #counters: SqliteCounters
  readonly #selectRecord: SqliteQuery<never>
  readonly #selectCurrent: SqliteQuery<CurrentRow>
  readonly #insert: SqliteQuery<never>
  readonly #db: BetterSqlite3.Database
  readonly #updates = new Map<string, SqliteQuery<never>>()
  readonly #delete: SqliteQuery<never>
  readonly #insertWords: SqliteQuery<never>
  readonly #deleteWords: SqliteQuery<never>
  readonly #history: SqliteHistory
  readonly #claims: SqliteIdempotencyClaims
  readonly #erasure: SqliteErasure
  readonly #matchKeys: SqliteMatchKeyWrites
  readonly #statistics: SqliteStatistics
  readonly #create: BetterSqlite3.Transaction<
    (
      record: NewBeneficiary,
      entry: HistoryEntry,
      claim: IdempotencyClaim | undefined,
    ) => CreateOutcome
  >
  readonly #replace: BetterSqlite3.Transaction<
    (previous: BeneficiaryRecord, next: BeneficiaryRecord, entry: HistoryEntry) => WriteOutcome
  >
  readonly #remove: BetterSqlite3.Transaction<
    (id: number, expectedVersion: number | undefined, entry: HistoryEntry) => WriteOutcome
  >

  /**
   * @param db An open connection whose schema `migrateSqlite` brought up to date.
   * @param assertOpen Throws when the owning storage is closed; called first by every method.
   * @param group The connection's group commit, through which every write goes.
   * @param dataVersion The connection's `data_version`, for remembered list totals.
   * @param writer Where the writes run instead of `group` when given: the writer thread
   * (`SqliteWriterThread`), which runs them through a store of its own on its own connection.
   */
  constructor(
    db: BetterSqlite3.Database,
    assertOpen: () => void,
    group: SqliteGroupCommit,
    dataVersion: SqliteDataVersion,
    writer?: SqliteWrites,
  ) {
    this.#assertOpen = assertOpen
    this.#writes = group
    this.#writer = writer
    this.#db = db
    this.#list = new SqliteBeneficiaryList(db, dataVersion)
    this.#counters = new SqliteCounters(db)
    // Counted from deferred statements, so that a failed write is not counted, and written
    // once per group.
    const counters = this.#counters
    group.finishEach({ finish: () => counters.flush(), discard: () => counters.discard() })
    this.#statistics = new SqliteStatistics(db, group)
    const byId = queryBuilder.selectFrom('beneficiaries').where('id', '=', slot('id'))
    this.#selectRecord = new SqliteQuery(db, byId.select(RECORD_COLUMNS))
    this.#selectCurrent = new SqliteQuery(db, byId.select(CURRENT_COLUMNS))
    const writes = prepareWriteStatements(db)
    this.#insert = writes.insert
    this.#insertWords = writes.insertWords
    this.#delete = new SqliteQuery(
      db,
      queryBuilder.deleteFrom('beneficiaries').where('id', '=', slot('id')),
    )
    // FTS5's `delete` command: a contentless table takes a row out with the words it was given,
    // and in `secure-delete` mode removes them from the index at once (D27).
    this.#deleteWords = new SqliteQuery(
      db,
      queryBuilder.insertInto('beneficiary_search').values({
        // The hidden column, which a row never sets: the command's name.
        beneficiary_search: slot('command'),
        rowid: slot<number>('id'),
        words: slot<string>('words'),
        status: slot<string>('status'),
      } as never),
    )

    this.#history = new SqliteHistory(db)
    this.#claims = new SqliteIdempotencyClaims(db)
    this.#erasure = new SqliteErasure(db)
    this.#matchKeys = new SqliteMatchKeyWrites(db)

    this.#create = db.transaction((record, entry, claim) => this.#createNow(record, entry, claim))
    this.#replace = db.transaction((previous, next, entry) =>
      this.#updateNow(previous, next, entry),
    )
    this.#remove = db.transaction((id, expected, entry) => this.#removeNow(id, expected, entry))
  }

  /** The record with this id, or `undefined`. */
  async get(id: number): Promise<BeneficiaryRecord | undefined> {
    this.#assertOpen()
    const values = this.#selectRecord.getValues({ id })
    return values === undefined ? undefined : recordOf(values)
  }

  /** One page of summaries matching `query`, with the exact total count. */
  async list(query: ListQuery): Promise<Page<BeneficiarySummary>> {
    this.#assertOpen()
    return this.#list.list(query)
  }

  /**
   * Inserts the record (id from AUTOINCREMENT, version 1), its search words, its `created`
   * entry and the claim, in one transaction. A live claim for the same client and key wins
   * over everything else, including a fiscal code that is now taken by the claim's own record.
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
    try {
      if (this.#writer !== undefined) {
        const created = await this.#writer.createBeneficiary(record, entry, idempotency)
        if (typeof created !== 'number') return created
        return { kind: 'created', record: toRecordFrom(record, created) }
      }
      return await this.#writes.run(() => this.#create(record, entry, idempotency))
    } catch (error) {
      throw translate(error)
    }
  }

  /**
   * Replaces the record and appends `entry` when the stored version is `previous.version`.
   * `next` is stored as given: the caller sets its version. The record is not read again: what
   * changes is worked out from `previous`, and the UPDATE itself checks the version.
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
    try {
      if (this.#writer !== undefined) {
        return await this.#writer.updateBeneficiary(previous, next, entry)
      }
      return await this.#writes.run(() => this.#replace(previous, next, entry))
    } catch (error) {
      throw translate(error)
    }
  }

  /**
   * Deletes the record and its search words, empties the `changes` of its earlier history
   * entries and appends `entry`, in one transaction; the fiscal code becomes free (D13, D27).
   * Once committed, the WAL is emptied soon after (`SqliteErasure`), so that no file holds the
   * erased values.
   */
  async remove(
    id: number,
    expectedVersion: number | undefined,
    entry: HistoryEntry,
  ): Promise<WriteOutcome> {
    this.#assertOpen()
    if (this.#writer !== undefined)
      return this.#writer.removeBeneficiary(id, expectedVersion, entry)
    const outcome = await this.#writes.run(() => this.#remove(id, expectedVersion, entry))
    if (outcome === 'done') this.#erasure.erased()
    return outcome
  }

  /** A page of the record's history, oldest first; `undefined` once the record is deleted. */
  async history(
    id: number,
    offset: number,
    limit: number,
  ): Promise<Page<HistoryEntry> | undefined> {
    this.#assertOpen()
    if (this.#selectCurrent.get({ id }) === undefined) return undefined
    return this.#history.page(id, offset, limit)
  }

  /**
   * Every history entry kept for `id`, oldest first, including those of a deleted record (then
   * erased: empty `changes`, ending with the `deleted` entry), for audits and tests. Not part of
   * the port. `undefined` when no record ever had this id.
   */
  async retainedHistory(id: number): Promise<readonly HistoryEntry[] | undefined> {
    this.#assertOpen()
    return this.#history.all(id)
  }

  #createNow(
    record: NewBeneficiary,
    entry: HistoryEntry,
    claim: IdempotencyClaim | undefined,
  ): CreateOutcome {
    if (claim !== undefined) {
      const held = this.#claims.held(claim)
      if (held !== undefined) return held
    }
    const keys = nameKeys(record)
    const inserted = this.#insert.run(toColumns(record, 1, keys))
    const id = Number(inserted.lastInsertRowid)
    this.#matchKeys.add(id, record)
    this.#writes.defer(() =>
      this.#insertWords.run({ id, words: keys.words, status: record.status }),
    )
    const counted = { ...record, ...keys, id }
    this.#writes.defer(() => {
      this.#counters.add(counted)
      this.#statistics.created()
    })
    this.#history.append(id, entry)
    if (claim !== undefined) this.#claims.add(claim, id, record.created_at)
    return { kind: 'created', record: toRecordFrom(record, id) }
  }

  #updateNow(
    previous: BeneficiaryRecord,
    next: BeneficiaryRecord,
    entry: HistoryEntry,
  ): WriteOutcome {
    const id = next.id
    const renamed = previous.first_name !== next.first_name || previous.last_name !== next.last_name
    const moved = previous.status !== next.status
    // The search words and sort keys follow the names and the status, which most updates keep:
    // worked out only when one of them changes. Otherwise both sides take the same stand-in,
    // which leaves the sort columns out of the UPDATE and the name counters as they are.
    const keys = renamed || moved ? nameKeys(next) : undefined
    const after = keys ?? KEPT_KEYS
    const before = renamed ? nameKeys(previous) : after
    const columns = toColumns(next, next.version, after)
    const update = this.#updateQuery(toColumns(previous, previous.version, before), columns)
    // Only now: the statement is chosen by the columns that change, and these two are not columns.
    const values: Record<string, unknown> = columns
    values.id = id
    values.expected_version = previous.version
    if (update.run(values).changes === 0) {
      return this.#selectCurrent.get({ id }) === undefined ? 'missing' : 'conflict'
    }
    this.#matchKeys.replace(id, previous, next)
    if (keys !== undefined) {
      // The words the row was given: the old names' (unchanged unless renamed).
      const words = (renamed ? nameKeys(previous) : keys).words
      this.#writes.defer(() => {
        this.#deleteWords.run({ command: 'delete', id, words, status: previous.status })
        this.#insertWords.run({ id, words: keys.words, status: next.status })
      })
    }
    this.#writes.defer(() =>
      this.#counters.replace(countedOf(previous, before), countedOf(next, after)),
    )
    this.#history.append(id, entry)
    return 'done'
  }

  /**
   * The UPDATE that sets only the columns whose values change: SQLite rewrites the entries of
   * every index on a column named in SET, changed or not, and with seven indexes that tripled
   * the cost of an update. One prepared statement per set of columns, built on first use.
   */
  #updateQuery(
    before: Readonly<Record<string, unknown>>,
    after: Readonly<Record<string, unknown>>,
  ): SqliteQuery<never> {
    const changed = Object.keys(after).filter((column) => after[column] !== before[column])
    const key = changed.join(',')
    let query = this.#updates.get(key)
    if (query === undefined) {
      const slots = beneficiarySlots() as Record<string, never>
      const set = Object.fromEntries(changed.map((column) => [column, slots[column]]))
      query = new SqliteQuery(
        this.#db,
        queryBuilder
          .updateTable('beneficiaries')
          .set(set)
          .where('id', '=', slot('id'))
          .where('version', '=', slot('expected_version')),
      )
      this.#updates.set(key, query)
    }
    return query
  }

  #removeNow(id: number, expectedVersion: number | undefined, entry: HistoryEntry): WriteOutcome {
    const current = this.#selectCurrent.get({ id })
    if (current === undefined) return 'missing'
    if (expectedVersion !== undefined && current.version !== expectedVersion) return 'conflict'
    this.#delete.run({ id })
    this.#matchKeys.remove(id)
    const words = nameKeys(current).words
    const status = current.status
    this.#writes.defer(() => this.#deleteWords.run({ command: 'delete', id, words, status }))
    this.#writes.defer(() => this.#counters.erase(current))
    this.#history.erase(id)
    this.#history.append(id, entry)
    return 'done'
  }
}

/** A violated fiscal-code uniqueness becomes the domain's `ConflictError` (D8). */
function translate(error: unknown): unknown {
  if (
    error instanceof Error &&
    (error as { code?: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE' &&
    error.message.includes('beneficiaries.fiscal_code')
  ) {
    return new ConflictError('fiscal_code', { cause: error })
  }
  return error
}
