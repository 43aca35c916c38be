import type BetterSqlite3 from 'better-sqlite3'
import type { BeneficiaryStatus, BeneficiarySummary } from '../../core/beneficiary.js'
import type { ListQuery } from '../../core/ports/beneficiary-store.js'
import { byCodePoint } from './sqlite-counted-keys.js'
import { parseWrittenIds } from './sqlite-counters.js'
import { GenerationLog } from './sqlite-generation-log.js'
import {
  groupCountsOf,
  selectByGroup,
  selectPage,
  type SortGroups,
} from './sqlite-page-selection.js'
import { KeptArrays } from './sqlite-kept-arrays.js'
import { MAX_CLASS_TERMS, NameClasses, type ClassTest } from './sqlite-name-classes.js'
import { SqliteTextColumn } from './sqlite-text-column.js'
import { UpdateOrder, type UpdateChange, type UpdateKeys } from './sqlite-update-order.js'
import { lowerBound, Postings, WordIndex } from './sqlite-word-index.js'

/** Ids of the write log a copy applies at most at once; further behind, it loads anew. */
const MAX_CAUGHT_UP = 50_000
/**
 * Counts by group `page` keeps at most, between two changes of the records, all in one array
 * (4 MB): an array each, made and let go at every sorted search with a date range (whose keys
 * seldom come again), would have V8 sweep them by the thousand.
 */
const MAX_COUNTED = 1 << 20
/** Keys of counts by group kept at most. */
const MAX_COUNTED_KEYS = 4_096
/**
 * Distinct names (first and last) up to which a search of several terms is answered by names
 * (about 0.1 µs a name to mark the terms it holds, once a search), and beyond which by the word
 * index's intersection. At most 65,536: the test of each match reads both names' entries packed
 * in 16 bits each (`#pairs`).
 */
const MAX_NAMES_TESTED = 4_096
/**
 * What a class of records (a pair of names and a status, `NameClasses`) costs a search answered by
 * classes, in matches of its rarest term read instead (measured: about 1 ns a class tested, 6 ns
 * a match united, 5–10 ns a match whose names are tested by id from 4 MB).
 */
const CLASS_COST = 0.25

/**
 * What walking a name costs to find a page of a date range sorted by name (two binary searches
 * of its ids, about 0.2 µs), in records of the range read instead (2–4 ns each): with more names
 * than the range's ids over this, the range's records are read.
 */
const NAME_COST = 64
/** Ids counted together by `idPage`. */
const ID_BUCKET = 2048
/** Arrays indexed by id are kept for ids up to this many per record, or a million in all. */
const IDS_PER_RECORD = 4
const MIN_ID_LIMIT = 1 << 20

/**
 * The records with `status` (any when undefined) created in [from, before), whose ids lie in
 * [lo, hi] (the bounds the counters keep of the range's days).
 */
export interface IdRange {
  readonly lo: number
  readonly hi: number
  readonly status: string | undefined
  readonly from: number
  readonly before: number
}

/**
 * The places [start, end) of the page `query` asks for among `total` matches in ascending order:
 * descending is ascending read backwards (ties go by id in the sort's direction).
 */
function placesOf(query: ListQuery, total: number): [number, number] {
  const start = query.descending ? Math.max(0, total - query.offset - query.limit) : query.offset
  const end = Math.min(total, query.descending ? total - query.offset : query.offset + query.limit)
  return [start, end]
}

const EMPTY_IDS = new Int32Array(0)

/** Name entries by id. */
type EntryIds = Uint16Array | Int32Array

/** What a scratch array of `SqliteRowKeys` is for: two at once must not share one. */
type ScratchUse = 'range' | 'search' | 'filter' | 'nameStarts' | 'nameCounts'

/** The distinct names of one name order, and the rank of each in it (D15). */
class NameRanks {
  readonly #entries = new Map<string, number>()
  readonly #sortKeys: string[] = []
  readonly #raws: string[] = []
  /** The search words of each entry's sort key (its `searchTerms()` joined by spaces). */
  readonly #words: string[][] = []
  /** The entries in the order of the name sort: sort key, then raw name, by code point. */
  readonly #sorted: number[] = []
  /** The ids of each entry's records, by status code (0: any), then by entry. */
  readonly #ids: Postings[][] = []
  /** `holdingEach`'s masks. */
  #masks = new Int32Array(0)

  /**
   * The entry of a name, added in its place in the order when new; by raw name alone, since the
   * sort key is a function of it (`nameSortKey`).
   */
  entry(sortKey: string, raw: string): number {
    let entry = this.#entries.get(raw)
    if (entry === undefined) {
      entry = this.#sortKeys.length
      this.#entries.set(raw, entry)
      this.#sortKeys.push(sortKey)
      this.#raws.push(raw)
      this.#words.push(sortKey.split(' ').filter((word) => word.length > 0))
      this.#sorted.splice(this.#placeOf(sortKey, raw), 0, entry)
    }
    return entry
  }

  /**
   * A mask by entry of the `prefixes` (at most 31) one of its name's words starts with: bit `t`
   * for `prefixes[t]`. The array is reused by the next call: read it before.
   */
  holdingEach(prefixes: readonly string[]): Int32Array {
    const entries = this.#words.length
    if (this.#masks.length < entries) this.#masks = new Int32Array(entries + (entries >> 2))
    const masks = this.#masks
    // Plain loops: a closure and an iterator an entry were most of what a search allocated.
    for (let entry = 0; entry < entries; entry++) {
      const words = this.#words[entry]!
      let mask = 0
      for (let term = 0; term < prefixes.length; term++) {
        for (let word = 0; word < words.length; word++) {
          if (words[word]!.startsWith(prefixes[term]!)) {
            mask |= 1 << term
            break
          }
        }
      }
      masks[entry] = mask
    }
    return masks
  }

  /** How many distinct names the order holds. */
  get size(): number {
    return this.#sorted.length
  }

  /** The entries in the order of the name sort. */
  inOrder(): readonly number[] {
    return this.#sorted
  }

  /** The ids of the records of an entry, ascending: of one status code, or of any (code 0). */
  ids(entry: number, code: number): Int32Array {
    return this.#ids[code]?.[entry]?.ids ?? EMPTY_IDS
  }

  /** Counts `id` in as a record of `entry` with the status `code`. */
  add(entry: number, code: number, id: number): void {
    for (const of of [0, code]) {
      const byEntry = (this.#ids[of] ??= [])
      ;(byEntry[entry] ??= new Postings()).add(id)
    }
  }

  /** Counts `id` out of `entry` and `code`. */
  remove(entry: number, code: number, id: number): void {
    for (const of of [0, code]) this.#ids[of]?.[entry]?.remove(id)
  }

  /** The name of an entry, as written. */
  raw(entry: number): string {
    return this.#raws[entry]!
  }

  /** The search words of an entry's name. */
  words(entry: number): readonly string[] {
    return this.#words[entry]!
  }

  #placeOf(sortKey: string, raw: string): number {
    let low = 0
    let high = this.#sorted.length
    while (low < high) {
      const middle = (low + high) >>> 1
      const entry = this.#sorted[middle]!
      const order =
        byCodePoint(this.#sortKeys[entry]!, sortKey) || byCodePoint(this.#raws[entry]!, raw)
      if (order < 0) low = middle + 1
      else high = middle
    }
    return low
  }
}

type KeyRow = [
  id: number,
  status: string,
  createdAt: number,
  updatedAt: number,
  sortFirst: string,
  firstName: string,
  sortLast: string,
  lastName: string,
  email: string,
  phone: string | null,
]

const KEY_COLUMNS =
  'id, status, created_at, updated_at, sort_first, first_name, sort_last, last_name, email, phone'

/**
 * This connection's copy of what every record is listed by, and of what a list shows of it: its
 * status, creation and update times and name entries, in typed arrays indexed by id (25 bytes a
 * record), its search words (`WordIndex`), its names' ids (`NameRanks`), its place in the order
 * by update (`UpdateOrder`), counts of records by bucket of ids and status, the ids of each
 * class of records (pair of names and status, `NameClasses`), and its e-mail and phone
 * (`SqliteTextColumn`): about 150 MB at a million records. Every list is filtered and
 * sorted here, and every page's rows are built from here (`summaries`), where SQLite looked each
 * row up by id (2.3 µs). Loaded on first use (about 2.6 s at a million records), it follows the
 * file through the write log, to which every write appends the ids it wrote, in its own
 * transaction: before a listing reads the copy, the copy reads the rows of the ids written since,
 * in the listing's snapshot. A copy the log no longer covers loads anew.
 */
export class SqliteRowKeys {
  readonly #log: GenerationLog
  readonly #all: BetterSqlite3.Statement<[], KeyRow>
  readonly #some: BetterSqlite3.Statement<[string], KeyRow>
  readonly #maxId: BetterSqlite3.Statement<[], number | null>
  /** The number of records, from the counters. */
  readonly #records: () => number
  /** Status codes (`#statusCodes`) by id; 0 for no record. */
  #status = new Uint8Array(0)
  readonly #statusCodes = new Map<string, number>()
  /** Statuses by code. */
  readonly #statusNames: string[] = ['']
  /** Each record's e-mail (field 0) and phone (field 1), side by side. */
  #contacts = new SqliteTextColumn(2)
  #words = new WordIndex()
  #created = new Float64Array(0)
  #updated = new Float64Array(0)
  /**
   * Each record's name entries: 16 bits while every entry fits (half the memory, and a page
   * sorted by name reads one by match, which miss the caches half as often), 32 bits after.
   */
  #first: EntryIds = new Uint16Array(0)
  #last: EntryIds = new Uint16Array(0)
  /**
   * Both name entries of each record in one number, first << 16 | last: a search's test of a
   * match's names reads one place by id, not two (each a cache miss: half the test's time). Read
   * only while names are at most {@link MAX_NAMES_TESTED}, so that every entry fits in 16 bits.
   */
  #pairs = new Int32Array(0)
  /**
   * The ids of each class of records (pair of name entries and status): a search of several
   * terms unites those it matches, and a search sorted by a name counts and pages from them.
   */
  #classes = new NameClasses()
  /**
   * How many of the ids of a caller's key (a search and its filters) each group of a sort holds,
   * by key and sort, from the second time they are asked for until the records change: the next
   * page, or the same page again, of a sorted search reads each match once, not twice.
   */
  readonly #counted = new KeptArrays(MAX_COUNTED, MAX_COUNTED_KEYS)
  #firstNames = new NameRanks()
  #lastNames = new NameRanks()
  readonly #byUpdate = new UpdateOrder()
  /** Records by bucket of {@link ID_BUCKET} ids, by status code (0: any): `idPage`'s counts. */
  #idBuckets: Int32Array[] = []
  /** `#scratch`'s arrays, by use. */
  readonly #scratches: Record<ScratchUse, Int32Array> = {
    range: new Int32Array(0),
    search: new Int32Array(0),
    filter: new Int32Array(0),
    nameStarts: new Int32Array(0),
    nameCounts: new Int32Array(0),
  }
  /**
   * Whether every record was created no earlier than every record of a lower id, as ids are given
   * in practice: a date range's records are then one run of any ascending list of ids, found by
   * two binary searches. False from the first record that breaks it until the next load.
   */
  #createdInIdOrder = true
  /** The highest id held, and its record's creation time. */
  #lastId = 0
  #lastCreated = -Infinity
  /** The generation of the write log the copy holds; -1 before the first load. */
  #held = -1
  /** The largest id the arrays may hold; a copy is not kept for ids far sparser than records. */
  #idLimit = 0

  constructor(db: BetterSqlite3.Database, records: () => number) {
    this.#records = records
    this.#log = new GenerationLog(db, { table: 'beneficiary_write_log', column: 'ids' })
    this.#all = db.prepare<[], KeyRow>(`SELECT ${KEY_COLUMNS} FROM beneficiaries`).raw()
    this.#some = db
      .prepare<[string], KeyRow>(
        `SELECT ${KEY_COLUMNS} FROM beneficiaries WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id`,
      )
      .raw()
    this.#maxId = db.prepare<[], number | null>('SELECT max(id) FROM beneficiaries').pluck()
  }

  /**
   * Brings the copy to the records this connection reads now, inside the caller's snapshot;
   * false when no copy is kept: ids so sparse (far more than {@link IDS_PER_RECORD} per record)
   * that arrays indexed by id would waste memory, which the caller then does without.
   */
  refresh(): boolean {
    const generation = this.#log.latest()
    if (generation === this.#held) return true
    this.#counted.clear()
    if (this.#held >= 0 && generation > this.#held && this.#catchUp(generation)) return true
    return this.#load(generation)
  }

  /**
   * The page `query` asks for of a search sorted by a name, with a status or none and no dates,
   * and the number of its matches, from the classes of records (`NameClasses`) rather than from the
   * matches themselves: the classes' counts by name give the names holding the page, whose
   * records matching are the name's own (a name holding every term) or the union of its classes
   * that hold them. No match outside the page is read: a list of `m` sorted by last name (281,000
   * matches) cost 1 ms with a pass over them, 174 µs so. `undefined` where a pass over the matches of
   * the rarest term costs less (classes many against them), or for another sort or with dates.
   */
  namedPage(
    terms: readonly string[],
    query: ListQuery,
  ): { ids: number[]; total: number } | undefined {
    const { sort, status, createdFrom, createdBefore } = query
    if (sort !== 'first_name' && sort !== 'last_name') return undefined
    if (createdFrom !== undefined || createdBefore !== undefined) return undefined
    const distinct = [...new Set(terms)]
    const fewest = this.#rarestFirst(distinct)
    const names = this.#firstNames.size + this.#lastNames.size
    if (fewest === undefined || this.#classes.size * CLASS_COST + names >= fewest) return undefined
    const code = this.#codeOf(status)
    if (code < 0) return { ids: [], total: 0 }
    const test = this.#classTest(distinct, code)
    const [side, ranks, sideTerms] =
      sort === 'first_name'
        ? ([0, this.#firstNames, test.firstTerms] as const)
        : ([1, this.#lastNames, test.lastTerms] as const)
    const counts = this.#scratch(ranks.size, 'nameCounts').fill(0, 0, ranks.size)
    this.#classes.countByName(test, side, counts)
    let total = 0
    for (let entry = 0; entry < ranks.size; entry++) total += counts[entry]!
    const [start, end] = placesOf(query, total)
    if (start >= end) return { ids: [], total }
    const order = ranks.inOrder()
    // Names in their order, skipped whole up to the one holding the page's first place.
    let [rank, skipped] = [0, 0]
    while (skipped + counts[order[rank]!]! <= start) skipped += counts[order[rank++]!]!
    const page: number[] = []
    while (skipped < end) {
      const entry = order[rank++]!
      const ids =
        sideTerms[entry] === test.all
          ? ranks.ids(entry, code)
          : this.#classes.unionOfName(test, side, entry, (length) =>
              this.#scratch(length, 'search'),
            )
      const [from, to] = [Math.max(0, start - skipped), Math.min(ids.length, end - skipped)]
      for (let i = from; i < to; i++) page.push(ids[i]!)
      skipped += counts[entry]!
    }
    return { ids: query.descending ? page.reverse() : page, total }
  }

  /**
   * The ids of the page `query` asks for (its sort, direction, offset and limit) among `ids`, the
   * ids of every match, ascending: a slice when sorted by id, and by creation while records were
   * created in id order (the two orders are then one, ties going by id); else the page's places
   * found by `selectPage` (by creation) or `selectByGroup` (by name or update). `key` names the
   * ids for the caller until the records change (a search and its filters): their counts by
   * group are then kept, and the next page of the same ids and sort does not count them again.
   */
  page(ids: Int32Array, query: ListQuery, key?: string): number[] {
    const [start, end] = placesOf(query, ids.length)
    if (start >= end) return []
    const page =
      query.sort === 'id' || (query.sort === 'created_at' && this.#createdInIdOrder)
        ? Array.from(ids.subarray(start, end))
        : query.sort === 'created_at'
          ? selectPage(ids, this.#created, start, end)
          : this.#selectByGroup(
              ids,
              this.#groups(query.sort),
              start,
              end,
              key === undefined ? undefined : `${key}\u0000${query.sort}`,
            )
    return query.descending ? page.reverse() : page
  }

  /**
   * `selectByGroup`, with the counts by group of `key`'s ids kept for the next page once `key`
   * comes back.
   */
  #selectByGroup(
    ids: Int32Array,
    sort: SortGroups,
    start: number,
    end: number,
    key: string | undefined,
  ): number[] {
    if (key === undefined) return selectByGroup(ids, sort, start, end)
    const counted =
      this.#counted.get(key) ?? this.#counted.keepIfAskedAgain(key, groupCountsOf(ids, sort))
    return selectByGroup(ids, sort, start, end, counted)
  }

  /**
   * The ids of the page `query` asks for among the records of `range`: gathered in one pass over
   * its ids (about 2 ns each), with no array of them made.
   */
  rangePage({ lo, hi, status, from, before }: IdRange, query: ListQuery): number[] {
    const end = Math.min(hi, this.#status.length - 1)
    const kept = this.#scratch(Math.max(0, end - lo + 1), 'range')
    let count = 0
    const code = this.#codeOf(status)
    const [statuses, created] = [this.#status, this.#created]
    for (let id = Math.max(lo, 0); id <= end; id++) {
      const held = statuses[id]!
      const at = created[id]!
      if (held !== 0 && (code === 0 || held === code) && at >= from && at < before)
        kept[count++] = id
    }
    return this.page(kept.subarray(0, count), query)
  }

  /**
   * The ids of the page `query`, sorted by a name, asks for among the records of `range`, from
   * the ids each name holds: the names are walked in their order, and each one's records in the
   * range counted by two binary searches of its ids, so the page is found without reading a
   * record outside it (a name costs about 0.2 µs; SQL counted each name's records in the index,
   * 0.5–1.5 ms a page, and the copy's other path reads every record of the range). `undefined`
   * when records were not created in id order (a range's records are then not one run of each
   * name's ids) or the names are too many for a walk to beat reading the range
   * ({@link NAME_COST}).
   */
  namePage({ lo, hi, status, from, before }: IdRange, query: ListQuery): number[] | undefined {
    const names = query.sort === 'first_name' ? this.#firstNames : this.#lastNames
    if (!this.#createdInIdOrder || names.size * NAME_COST > hi - lo + 1) return undefined
    const code = this.#codeOf(status)
    if (code < 0) return []
    const [first, last] = this.#runOf(lo, hi, from, before)
    const order = names.inOrder()
    const starts = this.#scratch(order.length, 'nameStarts')
    const counts = this.#scratch(order.length, 'nameCounts')
    let total = 0
    for (let rank = 0; rank < order.length; rank++) {
      const ids = names.ids(order[rank]!, code)
      starts[rank] = lowerBound(ids, ids.length, first)
      counts[rank] = lowerBound(ids, ids.length, last + 1) - starts[rank]!
      total += counts[rank]!
    }
    const [start, end] = placesOf(query, total)
    const page: number[] = []
    let passed = 0
    for (let rank = 0; rank < order.length && passed < end; rank++) {
      const count = counts[rank]!
      if (passed + count > start) {
        const ids = names.ids(order[rank]!, code)
        const since = starts[rank]! + Math.max(0, start - passed)
        const until = starts[rank]! + Math.min(count, end - passed)
        for (let i = since; i < until; i++) page.push(ids[i]!)
      }
      passed += count
    }
    return query.descending ? page.reverse() : page
  }

  /**
   * The ids of the page `query`, sorted by id (or by creation, records created in id order),
   * asks for among the records of `range`: counted by bucket of {@link ID_BUCKET} ids and status
   * (kept as writes come), then read from the buckets the page starts in, about 10 µs wherever
   * it lies, where SQL passed every record before it along an index (7 ms 7,000 deep in a
   * status and two months). `undefined` for another sort, or a date range while records were
   * not created in id order (its records are then not one run of ids).
   */
  idPage(range: IdRange, query: ListQuery): number[] | undefined {
    const { lo, hi, status, from, before } = range
    const undated = from === -Infinity && before === Infinity
    if (!this.#createdInIdOrder && !undated) return undefined
    if (query.sort !== 'id' && !(query.sort === 'created_at' && this.#createdInIdOrder)) {
      return undefined
    }
    const code = this.#codeOf(status)
    const counts = this.#idBuckets[code]
    const [first, last] = this.#runOf(lo, hi, from, before)
    if (counts === undefined || first > last) return []
    const statuses = this.#status
    const holds = (id: number) => statuses[id] !== 0 && (code === 0 || statuses[id] === code)
    const countIn = (since: number, until: number) => {
      let count = 0
      for (let id = since; id <= until; id++) count += Number(holds(id))
      return count
    }
    const [low, high] = [Math.floor(first / ID_BUCKET), Math.floor(last / ID_BUCKET)]
    const firstEnd = Math.min(last, (low + 1) * ID_BUCKET - 1)
    const head = countIn(first, firstEnd)
    let total = head
    for (let bucket = low + 1; bucket < high; bucket++) total += counts[bucket]!
    if (high > low) total += countIn(high * ID_BUCKET, last)
    const [start, end] = placesOf(query, total)
    // The ids before the page's bucket passed by their counts, then read one by one.
    let passed = head
    let since = first
    if (passed <= start && high > low) {
      let bucket = low + 1
      while (bucket < high && passed + counts[bucket]! <= start) passed += counts[bucket++]!
      since = bucket * ID_BUCKET
    } else {
      passed = 0
    }
    const page: number[] = []
    for (let id = since; id <= last && passed < end; id++) {
      if (!holds(id)) continue
      if (passed >= start) page.push(id)
      passed++
    }
    return query.descending ? page.reverse() : page
  }

  /**
   * The ids of the page `query`, sorted by update, asks for among the records of `range`, from
   * the order by update kept as writes come (`UpdateOrder`): about 30 µs wherever the page lies,
   * where reading the range's records and selecting the page cost 5 ns a record (2.5–8 ms for
   * half a million). `undefined` when records were not created in id order, or the range is
   * narrow enough for reading it to cost less.
   */
  updatePage({ lo, hi, status, from, before }: IdRange, query: ListQuery): number[] | undefined {
    if (!this.#createdInIdOrder) return undefined
    const [first, last] = this.#runOf(lo, hi, from, before)
    if (!this.#byUpdate.cheaperThanRange(last - first + 1, query.limit)) return undefined
    const code = this.#codeOf(status)
    if (code < 0 || first > last) return []
    const page = this.#byUpdate.page(
      first,
      last,
      code,
      (total) => placesOf(query, total),
      this.#updateKeys(),
    )
    return query.descending ? page.reverse() : page
  }

  /**
   * The first and last ids of the records of [lo, hi] created in [from, before), records created
   * in id order: the bounds of a range's days may reach a record before or after it (a deleted
   * one, or a day the range starts or ends within).
   */
  #runOf(lo: number, hi: number, from: number, before: number): [number, number] {
    const [statuses, created] = [this.#status, this.#created]
    let first = Math.max(lo, 0)
    let last = Math.min(hi, statuses.length - 1)
    while (first <= last && (statuses[first] === 0 || created[first]! < from)) first++
    while (last >= first && (statuses[last] === 0 || created[last]! >= before)) last--
    return [first, last]
  }

  /** The code of `status`: 0 for any (undefined), -1 for one no record ever had. */
  #codeOf(status: string | undefined): number {
    return status === undefined ? 0 : (this.#statusCodes.get(status) ?? -1)
  }

  #updateKeys(): UpdateKeys {
    return { status: this.#status, updated: this.#updated }
  }

  /**
   * A scratch array of ids for `use`, grown to hold `length`, kept from call to call: a million
   * matches would leave 4 MB a call, and every buffer made and let go is one more for V8 to sweep.
   */
  #scratch(length: number, use: ScratchUse): Int32Array {
    let ids = this.#scratches[use]
    if (ids.length < length) ids = this.#scratches[use] = new Int32Array(length + (length >> 2))
    return ids
  }

  /**
   * Sorts `distinct` search terms rarest first (the term whose words hold the fewest ids: the
   * classes a search tests are those of the names holding it, and a test of each match reads
   * its matches) and gives that term's ids; `undefined` where the terms are too many for a mask
   * or the names too many to mark ({@link MAX_NAMES_TESTED}).
   */
  #rarestFirst(distinct: string[]): number | undefined {
    const names = this.#firstNames.size + this.#lastNames.size
    if (distinct.length > MAX_CLASS_TERMS || names > MAX_NAMES_TESTED) return undefined
    const weights = new Map(distinct.map((term) => [term, this.#words.weight(term)]))
    distinct.sort((a, b) => weights.get(a)! - weights.get(b)!)
    return weights.get(distinct[0]!)!
  }

  /**
   * What a search of `distinct` terms (rarest first) with status `code` (0: any) asks of a class:
   * by name entry, a bit for each term its name holds, so that a pair of names matches when its
   * two masks together hold every bit.
   */
  #classTest(distinct: readonly string[], code: number): ClassTest {
    return {
      firstTerms: this.#firstNames.holdingEach(distinct),
      lastTerms: this.#lastNames.holdingEach(distinct),
      all: 2 ** distinct.length - 1,
      code,
    }
  }

  /**
   * The ids of the records with a word starting with every term (D16), ascending. The array may
   * be the word index's own, or a scratch array the next call to `search` or `filter` reuses:
   * read it before, do not change it.
   */
  search(terms: readonly string[]): Int32Array {
    const distinct = [...new Set(terms)]
    const fewest = distinct.length === 1 ? undefined : this.#rarestFirst(distinct)
    if (fewest === undefined) return this.#words.search(distinct)
    const test = this.#classTest(distinct, 0)
    const { firstTerms, lastTerms } = test
    // The classes whose names hold every term, united, where that costs less than testing the
    // names of each match of the rarest term (`CLASS_COST`).
    if (this.#classes.size * CLASS_COST + this.#status.length / 1024 < fewest) {
      return this.#classes.union(test, (length) => this.#scratch(length, 'search'))
    }
    // Else the matches of the rarest term, each record's names tested for the other terms in
    // one read by id: the other terms' matches are not made, nor intersected (a common prefix's
    // union, and a walk of it, cost more). A loop with no closure and no array made per id
    // (which cost 100 ns an id: 5 ms for a term of 50,000 matches), into a scratch array kept
    // from search to search (buffers made and let go at every search had V8 sweep them by the
    // ten thousand); branch-free: each id written, counted only if it holds the terms (a branch
    // on it is mispredicted as often as not).
    const candidates = this.#words.matches(distinct[0]!)
    const kept = this.#scratch(candidates.length, 'search')
    const others = 2 ** distinct.length - 2
    const pairs = this.#pairs
    let count = 0
    for (let i = 0; i < candidates.length; i++) {
      const id = candidates[i]!
      const pair = pairs[id]!
      kept[count] = id
      count += Number(((firstTerms[pair >>> 16]! | lastTerms[pair & 0xffff]!) & others) === others)
    }
    return kept.subarray(0, count)
  }

  /**
   * The summaries of the records `ids` (held by the copy), in that order: read from memory, where
   * SQLite looked each row up by id (2.3 µs a row at a million records, in no order the page
   * cache helps: a page of 100 took a quarter of a millisecond).
   */
  summaries(ids: readonly number[]): BeneficiarySummary[] {
    return ids.map((id) => ({
      id,
      first_name: this.#firstNames.raw(this.#first[id]!),
      last_name: this.#lastNames.raw(this.#last[id]!),
      email: this.#contacts.get(id, 0)!,
      phone: this.#contacts.get(id, 1),
      status: this.#statusNames[this.#status[id]!] as BeneficiaryStatus,
      created_at: this.#created[id]!,
      updated_at: this.#updated[id]!,
    }))
  }

  /**
   * The ids among `ids` (ascending) of records with `status` (any when undefined) created in
   * [from, before): a part of `ids`, or a scratch array the next call to `filter` reuses (read it
   * before). When records were created in id order, those of the dates are one run of `ids`,
   * found by two binary searches, and only the status is checked id by id, without a branch:
   * reading each id's creation time, 8 MB of them in no order the caches follow, cost 5–10 ns a
   * match (2 ms for the 281,000 of `m`).
   */
  filter(ids: Int32Array, status: string | undefined, from: number, before: number): Int32Array {
    let [first, end] = [0, ids.length]
    const inOrder = this.#createdInIdOrder
    if (inOrder) {
      first = this.#firstCreatedFrom(ids, from)
      end = Math.max(first, this.#firstCreatedFrom(ids, before))
      if (status === undefined) return ids.subarray(first, end)
    }
    const kept = this.#scratch(end - first, 'filter')
    let count = 0
    const code = this.#codeOf(status)
    const [statuses, created] = [this.#status, this.#created]
    if (inOrder) {
      for (let i = first; i < end; i++) {
        const id = ids[i]!
        kept[count] = id
        count += Number(statuses[id] === code)
      }
    } else {
      for (let i = first; i < end; i++) {
        const id = ids[i]!
        const at = created[id]!
        if ((code === 0 || statuses[id] === code) && at >= from && at < before) kept[count++] = id
      }
    }
    return kept.subarray(0, count)
  }

  /** The first place in `ids` (ascending, created in id order) of a record created at `at` or later. */
  #firstCreatedFrom(ids: Int32Array, at: number): number {
    let low = 0
    let high = ids.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (this.#created[ids[middle]!]! < at) low = middle + 1
      else high = middle
    }
    return low
  }

  /** The records in the order of a sort by a name (by name entry) or by update (by block). */
  #groups(sort: 'first_name' | 'last_name' | 'updated_at'): SortGroups {
    if (sort === 'updated_at') return this.#byUpdate.groups(this.#updateKeys())
    const [names, via] =
      sort === 'first_name' ? [this.#firstNames, this.#first] : [this.#lastNames, this.#last]
    return { via, shift: 0, groups: names.size, inOrder: names.inOrder() }
  }

  /** Applies the ids written after the generation held; false when the log does not cover them. */
  #catchUp(generation: number): boolean {
    const entries = this.#log.since(this.#held, generation)
    if (entries === undefined) return false
    const written = new Set<number>()
    for (const text of entries) {
      const ids = parseWrittenIds(text)
      if (ids === undefined) return false
      for (const id of ids) written.add(id)
      if (written.size > MAX_CAUGHT_UP) return false
    }
    const rows = this.#some.all(JSON.stringify([...written]))
    if (rows.some(([id]) => id > this.#idLimit)) return false
    // Rows in id order (a record created is counted in id order), the order by update after.
    const changes: UpdateChange[] = []
    for (const row of rows) {
      this.#set(row, changes)
      written.delete(row[0])
    }
    // Written, then deleted: no row.
    for (const id of written) this.#unset(id, changes)
    this.#byUpdate.changeAll(changes, this.#updateKeys())
    this.#held = generation
    return true
  }

  #load(generation: number): boolean {
    const maxId = this.#maxId.get() ?? 0
    const records = this.#records()
    this.#idLimit = Math.min(2 ** 31 - 1, Math.max(MIN_ID_LIMIT, records * IDS_PER_RECORD))
    this.#held = -1
    this.#status = new Uint8Array(0)
    this.#words = new WordIndex()
    this.#created = new Float64Array(0)
    this.#updated = new Float64Array(0)
    this.#first = new Uint16Array(0)
    this.#last = new Uint16Array(0)
    this.#pairs = new Int32Array(0)
    this.#classes = new NameClasses()
    this.#contacts = new SqliteTextColumn(2)
    // Names no record holds any more are not kept from one load to the next.
    this.#firstNames = new NameRanks()
    this.#lastNames = new NameRanks()
    this.#createdInIdOrder = true
    this.#lastId = 0
    this.#lastCreated = -Infinity
    this.#byUpdate.reset(this.#idLimit)
    this.#idBuckets = []
    if (maxId > this.#idLimit) return false
    // Room for an eighth more ids, made before the rows rather than grown to: growing copies every
    // array by id (31 ms at a million records, and a full collection of V8's heap may follow),
    // which the creates that reach the end would then pay, between two requests.
    this.#grow(0, Math.min(this.#idLimit, maxId + (maxId >> 3)) + 1)
    // The order by update is sorted once, after every record.
    for (const row of this.#all.iterate()) this.#set(row, undefined)
    this.#byUpdate.prepare(this.#updateKeys())
    this.#held = generation
    return true
  }

  /** Sets a record's row in the copy, adding what the order by update must follow to `changes`. */
  #set(
    [id, status, createdAt, updatedAt, sortFirst, first, sortLast, last, email, phone]: KeyRow,
    changes: UpdateChange[] | undefined,
  ): void {
    if (id >= this.#created.length) this.#grow(id)
    const firstEntry = this.#firstNames.entry(sortFirst, first)
    const lastEntry = this.#lastNames.entry(sortLast, last)
    const held = this.#status[id] !== 0
    if (held ? this.#created[id] !== createdAt : id < this.#lastId) this.#createdInIdOrder = false
    if (id > this.#lastId) {
      if (createdAt < this.#lastCreated) this.#createdInIdOrder = false
      this.#lastId = id
      this.#lastCreated = createdAt
    }
    let code = this.#statusCodes.get(status)
    if (code === undefined) {
      code = this.#statusCodes.size + 1
      this.#statusCodes.set(status, code)
      this.#statusNames[code] = status
    }
    const [heldCode, heldFirst, heldLast] = [this.#status[id]!, this.#first[id]!, this.#last[id]!]
    const moved = !held || this.#updated[id] !== updatedAt
    if (!held || heldFirst !== firstEntry || heldLast !== lastEntry) {
      if (held) this.#words.remove(id, this.#wordsOf(heldFirst, heldLast))
      this.#words.add(id, this.#wordsOf(firstEntry, lastEntry))
    }
    if (!held || heldFirst !== firstEntry || heldLast !== lastEntry || heldCode !== code) {
      if (held) this.#classes.remove(heldFirst, heldLast, heldCode, id)
      this.#classes.add(firstEntry, lastEntry, code, id)
    }
    for (const [names, from, to] of [
      [this.#firstNames, heldFirst, firstEntry],
      [this.#lastNames, heldLast, lastEntry],
    ] as const) {
      if (held && heldCode === code && from === to) continue
      if (held) names.remove(from, heldCode, id)
      names.add(to, code, id)
    }
    if ((firstEntry > 0xffff || lastEntry > 0xffff) && this.#first instanceof Uint16Array) {
      this.#first = Int32Array.from(this.#first)
      this.#last = Int32Array.from(this.#last)
    }
    this.#first[id] = firstEntry
    this.#last[id] = lastEntry
    this.#pairs[id] = (firstEntry << 16) | (lastEntry & 0xffff)
    this.#status[id] = code
    this.#created[id] = createdAt
    this.#updated[id] = updatedAt
    this.#contacts.set(id, email, phone)
    changes?.push({ id, before: held ? heldCode : 0, after: code, moved })
    if (!held) this.#countId(id, code, 1)
    else if (heldCode !== code) {
      this.#countId(id, heldCode, -1)
      this.#countId(id, code, 1)
    }
  }

  /** Counts `id` in (1) or out (-1) of its bucket, for status `code` and for any. */
  #countId(id: number, code: number, delta: number): void {
    const buckets = Math.ceil((this.#idLimit + 1) / ID_BUCKET)
    const bucket = Math.floor(id / ID_BUCKET)
    for (const of of [0, code]) {
      ;(this.#idBuckets[of] ??= new Int32Array(buckets))[bucket]! += delta
    }
  }

  /** Forgets a deleted record. */
  #unset(id: number, changes: UpdateChange[]): void {
    if (id >= this.#status.length || this.#status[id] === 0) return
    const [code, first, last] = [this.#status[id]!, this.#first[id]!, this.#last[id]!]
    this.#words.remove(id, this.#wordsOf(first, last))
    this.#classes.remove(first, last, code, id)
    this.#firstNames.remove(first, code, id)
    this.#lastNames.remove(last, code, id)
    this.#status[id] = 0
    changes.push({ id, before: code, after: 0, moved: true })
    this.#countId(id, code, -1)
    this.#contacts.delete(id)
  }

  /** The search words of a record with these name entries. */
  #wordsOf(firstEntry: number, lastEntry: number): string[] {
    return [...this.#firstNames.words(firstEntry), ...this.#lastNames.words(lastEntry)]
  }

  #grow(id: number, length = Math.max(1024, id + 1, Math.ceil(this.#created.length * 1.5))): void {
    const grown = <T extends Uint8Array | Uint16Array | Float64Array | Int32Array>(
      array: T,
      to: T,
    ): T => {
      to.set(array)
      return to
    }
    const entries = (array: EntryIds): EntryIds =>
      array instanceof Uint16Array
        ? grown(array, new Uint16Array(length))
        : grown(array, new Int32Array(length))
    this.#status = grown(this.#status, new Uint8Array(length))
    this.#created = grown(this.#created, new Float64Array(length))
    this.#updated = grown(this.#updated, new Float64Array(length))
    this.#first = entries(this.#first)
    this.#last = entries(this.#last)
    this.#pairs = grown(this.#pairs, new Int32Array(length))
    this.#contacts.grow(length)
  }
}
