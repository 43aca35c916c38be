import { MemoryMatchIndex } from './memory-match-index.js'
import type {
  BeneficiaryRecord,
  BeneficiarySummary,
  HistoryEntry,
  SortField,
} from '../../core/beneficiary.js'
import { ConflictError } from '../../core/errors.js'
import type {
  BeneficiaryStore,
  CreateOutcome,
  IdempotencyClaim,
  ListQuery,
  NewBeneficiary,
  Page,
  WriteOutcome,
} from '../../core/ports/beneficiary-store.js'
import { nameSortKey, searchTerms } from '../../core/search-terms.js'
import { compareCodePoints } from './memory-collation.js'
import type { MemoryEventLog } from './memory-event-log.js'
import { frozenCopy } from './memory-frozen-copy.js'

/** A record with what `list` needs precomputed. */
interface StoredRecord {
  readonly record: BeneficiaryRecord
  readonly summary: BeneficiarySummary
  readonly words: readonly string[]
  readonly firstNameKey: string
  readonly lastNameKey: string
}

interface StoredClaim {
  readonly fingerprint: string
  readonly beneficiaryId: number
  readonly createdAt: number
  readonly expiresAt: number
}

type Comparator = (a: StoredRecord, b: StoredRecord) => number

/**
 * Beneficiaries, their history and Idempotency-Key claims, kept in maps. Every method does all
 * of its work synchronously, so each call is atomic however calls interleave.
 *
 * Ordering rules beyond the port: `last_name` and `first_name` sort by {@link nameSortKey}, then
 * by the raw name, both compared by code point, then by id. Ids start at 1 and are never reused.
 * The `createdAt` of a `claimed` outcome is the `created_at` of the record the claim created.
 *
 * Get one from `MemoryStorage`; it is not constructed on its own.
 */
export class MemoryBeneficiaryStore implements BeneficiaryStore {
  readonly #assertOpen: () => void
  readonly #records = new Map<number, StoredRecord>()
  /** Kept after a delete (erased, D27) for `retainedHistory`. */
  readonly #history = new Map<number, HistoryEntry[]>()
  readonly #idsByFiscalCode = new Map<string, number>()
  /** Claims by client id, then key. */
  readonly #claims = new Map<string, Map<string, StoredClaim>>()
  #lastId = 0
  /** The match keys of the records (D38), kept in step by `#put` and `#delete`. */
  readonly matchIndex = new MemoryMatchIndex((id) => this.#records.get(id)?.record)

  /** Where each change's event goes (D33), in the same step as its history entry. */
  readonly #events: MemoryEventLog | undefined

  /** @param assertOpen Throws when the owning storage is closed; called first by every method. */
  constructor(assertOpen: () => void, events?: MemoryEventLog) {
    this.#assertOpen = assertOpen
    this.#events = events
  }

  /** The record with this id, or `undefined`. The record is frozen. */
  async get(id: number): Promise<BeneficiaryRecord | undefined> {
    this.#assertOpen()
    return this.#records.get(id)?.record
  }

  /** One page of frozen summaries matching `query`, with the exact total; scans every record. */
  async list(query: ListQuery): Promise<Page<BeneficiarySummary>> {
    this.#assertOpen()
    if (query.search?.length === 0) return { items: [], total: 0 }
    const matches = [...this.#records.values()].filter((stored) => matchesFilters(stored, query))
    const ascending = comparatorFor(query.sort)
    matches.sort(query.descending ? (a, b) => ascending(b, a) : ascending)
    const items = matches
      .slice(query.offset, query.offset + query.limit)
      .map((stored) => stored.summary)
    return { items, total: matches.length }
  }

  /**
   * Inserts a copy of `record` with the next id and version 1, records `entry`, and claims
   * `idempotency` when given. A live claim for the same client and key wins over everything
   * else, including a fiscal code that is now taken (by the claim's own record).
   *
   * @throws ConflictError with `field` `fiscal_code` when another record has the fiscal code;
   * nothing is written then.
   */
  async create(
    record: NewBeneficiary,
    entry: HistoryEntry,
    idempotency?: IdempotencyClaim,
  ): Promise<CreateOutcome> {
    this.#assertOpen()
    if (idempotency !== undefined) {
      const claim = this.#claims.get(idempotency.clientId)?.get(idempotency.key)
      if (claim !== undefined && idempotency.now < claim.expiresAt) {
        const { fingerprint, beneficiaryId, createdAt } = claim
        return { kind: 'claimed', fingerprint, beneficiaryId, createdAt }
      }
    }
    this.#assertFiscalCodeFree(record.fiscal_code, undefined)

    this.#lastId += 1
    const stored = toStoredRecord({ ...record, id: this.#lastId, version: 1 })
    this.#put(stored)
    this.#history.set(stored.record.id, [copyEntry(entry)])
    this.#events?.append(stored.record.id, entry)
    if (idempotency !== undefined) {
      const claims = this.#claims.get(idempotency.clientId) ?? new Map<string, StoredClaim>()
      claims.set(idempotency.key, {
        fingerprint: idempotency.fingerprint,
        beneficiaryId: stored.record.id,
        createdAt: stored.record.created_at,
        expiresAt: idempotency.expiresAt,
      })
      this.#claims.set(idempotency.clientId, claims)
    }
    return { kind: 'created', record: stored.record }
  }

  /**
   * Replaces the record with a copy of `next` and appends `entry` when the stored version is
   * `previous.version`. `next` is stored as given: the caller sets its version. Only the version
   * of `previous` is read: the stored record is at hand.
   *
   * @throws ConflictError with `field` `fiscal_code` when another record has `next`'s fiscal
   * code; nothing is written then.
   */
  async update(
    previous: BeneficiaryRecord,
    next: BeneficiaryRecord,
    entry: HistoryEntry,
  ): Promise<WriteOutcome> {
    this.#assertOpen()
    const current = this.#records.get(next.id)
    if (current === undefined) return 'missing'
    if (current.record.version !== previous.version) return 'conflict'
    this.#assertFiscalCodeFree(next.fiscal_code, next.id)

    this.#delete(current)
    this.#put(toStoredRecord(next))
    this.#history.get(next.id)?.push(copyEntry(entry))
    this.#events?.append(next.id, entry)
    return 'done'
  }

  /**
   * Deletes the record, empties the `changes` of its earlier history entries and appends
   * `entry`; the fiscal code becomes free (D13, D27).
   */
  async remove(
    id: number,
    expectedVersion: number | undefined,
    entry: HistoryEntry,
  ): Promise<WriteOutcome> {
    this.#assertOpen()
    const current = this.#records.get(id)
    if (current === undefined) return 'missing'
    if (expectedVersion !== undefined && current.record.version !== expectedVersion) {
      return 'conflict'
    }

    this.#delete(current)
    const erased = (this.#history.get(id) ?? []).map((earlier) =>
      frozenCopy<HistoryEntry>({ ...earlier, changes: [] }),
    )
    erased.push(copyEntry(entry))
    this.#history.set(id, erased)
    this.#events?.append(id, entry)
    return 'done'
  }

  /**
   * Deletes at most `limit` history entries older than `before`, of any record, kept ones of
   * deleted records included (D37); how many it deleted.
   */
  async purgeHistory(before: number, limit: number): Promise<number> {
    this.#assertOpen()
    let purged = 0
    for (const [id, entries] of this.#history) {
      if (purged >= limit) break
      let expired = 0
      while (expired < entries.length && purged < limit && entries[expired]!.at < before) {
        expired++
        purged++
      }
      if (expired > 0) this.#history.set(id, entries.slice(expired))
    }
    return purged
  }

  /** A page of the record's frozen history entries, oldest first; `undefined` once deleted. */
  async history(
    id: number,
    offset: number,
    limit: number,
  ): Promise<Page<HistoryEntry> | undefined> {
    this.#assertOpen()
    if (!this.#records.has(id)) return undefined
    const entries = this.#history.get(id) ?? []
    return { items: entries.slice(offset, offset + limit), total: entries.length }
  }

  /**
   * Every history entry kept for `id`, oldest first, including those of a deleted record (then
   * erased: empty `changes`, ending with the `deleted` entry), for audits and tests. Not part of
   * the port. `undefined` when no record ever had this id.
   */
  retainedHistory(id: number): readonly HistoryEntry[] | undefined {
    this.#assertOpen()
    return this.#history.get(id)?.slice()
  }

  #assertFiscalCodeFree(fiscalCode: string | null, ownerId: number | undefined): void {
    if (fiscalCode === null) return
    const holder = this.#idsByFiscalCode.get(fiscalCode)
    if (holder !== undefined && holder !== ownerId) throw new ConflictError('fiscal_code')
  }

  #put(stored: StoredRecord): void {
    this.#records.set(stored.record.id, stored)
    this.matchIndex.add(stored.record)
    if (stored.record.fiscal_code !== null) {
      this.#idsByFiscalCode.set(stored.record.fiscal_code, stored.record.id)
    }
  }

  #delete(stored: StoredRecord): void {
    this.#records.delete(stored.record.id)
    this.matchIndex.remove(stored.record)
    if (stored.record.fiscal_code !== null) this.#idsByFiscalCode.delete(stored.record.fiscal_code)
  }

  /** Every record as it is now, frozen, in id order: the snapshot of an export. */
  snapshotRecords(): BeneficiaryRecord[] {
    this.#assertOpen()
    return [...this.#records.values()].map((stored) => stored.record).sort((a, b) => a.id - b.id)
  }
}

function toStoredRecord(source: BeneficiaryRecord): StoredRecord {
  // Picked field by field: a caller's extra properties are not stored, as in a table.
  const record = frozenCopy<BeneficiaryRecord>({
    id: source.id,
    first_name: source.first_name,
    last_name: source.last_name,
    email: source.email,
    phone: source.phone,
    date_of_birth: source.date_of_birth,
    fiscal_code: source.fiscal_code,
    address: source.address,
    status: source.status,
    metadata: source.metadata,
    created_at: source.created_at,
    updated_at: source.updated_at,
    version: source.version,
  })
  const summary = Object.freeze<BeneficiarySummary>({
    id: record.id,
    first_name: record.first_name,
    last_name: record.last_name,
    email: record.email,
    phone: record.phone,
    status: record.status,
    created_at: record.created_at,
    updated_at: record.updated_at,
  })
  return {
    record,
    summary,
    words: searchTerms(`${record.first_name} ${record.last_name}`),
    firstNameKey: nameSortKey(record.first_name),
    lastNameKey: nameSortKey(record.last_name),
  }
}

function copyEntry(entry: HistoryEntry): HistoryEntry {
  return frozenCopy<HistoryEntry>({
    at: entry.at,
    action: entry.action,
    client_id: entry.client_id,
    request_id: entry.request_id,
    changes: entry.changes.map((change) => ({
      field: change.field,
      old: change.old,
      new: change.new,
    })),
  })
}

function matchesFilters(stored: StoredRecord, query: ListQuery): boolean {
  const { record } = stored
  if (query.status !== undefined && record.status !== query.status) return false
  if (query.createdFrom !== undefined && record.created_at < query.createdFrom) return false
  if (query.createdBefore !== undefined && record.created_at >= query.createdBefore) return false
  if (query.search === undefined) return true
  return query.search.every((term) => stored.words.some((word) => word.startsWith(term)))
}

function comparatorFor(sort: SortField): Comparator {
  const byId: Comparator = (a, b) => a.record.id - b.record.id
  switch (sort) {
    case 'id':
      return byId
    case 'created_at':
      return (a, b) => a.record.created_at - b.record.created_at || byId(a, b)
    case 'updated_at':
      return (a, b) => a.record.updated_at - b.record.updated_at || byId(a, b)
    case 'last_name':
      return (a, b) =>
        compareCodePoints(a.lastNameKey, b.lastNameKey) ||
        compareCodePoints(a.record.last_name, b.record.last_name) ||
        byId(a, b)
    case 'first_name':
      return (a, b) =>
        compareCodePoints(a.firstNameKey, b.firstNameKey) ||
        compareCodePoints(a.record.first_name, b.record.first_name) ||
        byId(a, b)
  }
}
