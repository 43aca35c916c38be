/** Below this many elements a range is finished by insertion sort. */
const SMALL = 16
/** From this many elements on, a page is first narrowed down by a histogram of the keys. */
const BUCKETED_FROM = 2048
/** Buckets of that histogram (16 KB of counts: it stays in the first-level cache). */
const BUCKETS = 4096
/** Keys sampled for the range the buckets divide. */
const SAMPLE = 512

/**
 * Work arrays, grown as needed and shared by every call (one runs at a time): the elements kept,
 * their keys, the bucket of each element, and the histogram.
 */
let keptIds = new Int32Array(0)
let keptKeys = new Float64Array(0)
let bucketOf = new Uint16Array(0)
const counts = new Int32Array(BUCKETS)

/**
 * The ids at places [start, end) of `ids` sorted by (key, id) ascending, the key of an id
 * `byId[id]` (a creation time, where records were not created in id order), in that order: the
 * page of a sorted list, found without sorting the rest; `ids` is read, not changed. The keys are
 * read (a pass by id, 2–5 ns an id as the caches allow); many are then counted into buckets of
 * equal key ranges, and only the ids of the buckets that hold the page's places are kept (two
 * passes in order, about 2.5 ns an id); then a partial quicksort, which only descends into the
 * parts that hold a place of the page (about three comparisons an element).
 * Ids are distinct, so no two elements tie.
 */
export function selectPage(
  ids: Int32Array,
  byId: Float64Array,
  start: number,
  end: number,
): number[] {
  const last = Math.min(end, ids.length)
  if (start >= last) return []
  const { kept, skipped } =
    ids.length >= BUCKETED_FROM ? keepPageBuckets(ids, byId, start, last) : keepAll(ids, byId)
  sortPart(keptKeys, keptIds, 0, kept - 1, start - skipped, last - 1 - skipped)
  return Array.from(keptIds.subarray(start - skipped, last - skipped))
}

/**
 * Counting lanes of `selectByGroup`: consecutive ids counted into four arrays of counts in turn,
 * so that two ids of one group in a row do not wait on each other's increment (a count through
 * one array costs 2.7 ns an id, through four 1.1 ns). Used from this many ids a group, below which
 * adding the lanes up costs more than it saves.
 */
const LANES = 4
const LANES_FROM = 8

/**
 * Work arrays of `selectByGroup`: by group, its count (`LANES` of them, then their sum in the
 * first), whether the page takes it, and its next place; the ids taken, in their groups' order.
 */
let groupCounts = new Int32Array(0)
let taken = new Uint8Array(0)
let slots = new Int32Array(0)
let arranged = new Int32Array(0)

/**
 * Groups of records in the order of a sort: the group of an id is `via[id] >> shift`, and
 * `inOrder` lists the groups (`groups` of them) in the sort's order (absent: in their own order).
 * Within a group, ids go in their order, or by `within[id]` when given.
 */
export interface SortGroups {
  readonly via: Int32Array | Uint16Array
  readonly shift: number
  readonly groups: number
  readonly inOrder?: readonly number[] | undefined
  readonly within?: Int32Array | undefined
}

/**
 * The ids at places [start, end) of `ids` (ascending) in the order of `sort`: the page of a list
 * sorted by name (the groups are the names, in their order) or by update (the groups are blocks
 * of the order by update, and `within` each id's place in it). Each id's group is read and
 * counted (a read by id, 1–2 ns as the caches allow), which finds the groups holding the page;
 * a second pass reads the groups again and takes the ids of those groups, in their order, with
 * no branch on whether it takes one (the page's group may hold most ids, and a branch on it was
 * mispredicted as often as not). Sorted by name with the page in one group, as most are, it stops
 * at the page's last id (half the ids on average); otherwise the ids taken are put in their
 * groups' order, or sorted by `within`. No key is compared but those of the page's groups by
 * `within`. `ids` is read, not changed.
 */
export function selectByGroup(
  ids: Int32Array,
  { via, shift, groups, inOrder, within }: SortGroups,
  start: number,
  end: number,
  counted?: Int32Array,
): number[] {
  const last = Math.min(end, ids.length)
  if (start >= last) return []
  reserveGroups(groups)
  const counts = counted ?? groupCounts
  if (counted === undefined) countGroups(ids, via, shift, groups, counts)
  const groupAtRank = (rank: number) => (inOrder === undefined ? rank : inOrder[rank]!)
  // The ranks [first, final] hold the places [start, last); `skipped` ids rank before them.
  let first = 0
  let skipped = 0
  while (skipped + counts[groupAtRank(first)]! <= start) skipped += counts[groupAtRank(first++)]!
  let final = first
  let through = skipped + counts[groupAtRank(first)]!
  while (through < last) through += counts[groupAtRank(++final)]!
  const [from, to] = [start - skipped, last - skipped]
  const flags = taken
  flags.fill(0, 0, groups)
  for (let rank = first; rank <= final; rank++) flags[groupAtRank(rank)] = 1
  // One group, its ids in their order: its first `to` are the page's places up to its last.
  const single = first === final && within === undefined
  const kept = takeGroups(ids, via, shift, flags, single ? to : through - skipped)
  if (single) return Array.from(kept.subarray(from, to))
  if (within !== undefined) {
    const keys = keptKeys
    for (let i = 0; i < kept.length; i++) keys[i] = within[kept[i]!]!
    sortPart(keys, keptIds, 0, kept.length - 1, from, to - 1)
    return Array.from(kept.subarray(from, to))
  }
  // The ids taken, in id order, put in their groups' order: each group's next place.
  const slotOf = slots
  let place = 0
  for (let rank = first; rank <= final; rank++) {
    const group = groupAtRank(rank)
    slotOf[group] = place
    place += counts[group]!
  }
  if (arranged.length < kept.length) arranged = new Int32Array(keptIds.length)
  const inGroups = arranged
  for (let i = 0; i < kept.length; i++) {
    const id = kept[i]!
    inGroups[slotOf[via[id]! >> shift]!++] = id
  }
  return Array.from(inGroups.subarray(from, to))
}

/**
 * The first `count` ids of `ids` in the groups `flags` marks, in order, as the start of the work
 * array: each id is written at the next place, which only moves on for one of those groups.
 */
function takeGroups(
  ids: Int32Array,
  via: Int32Array | Uint16Array,
  shift: number,
  flags: Uint8Array,
  count: number,
): Int32Array {
  reserve(count + 1)
  const kept = keptIds
  let at = 0
  for (let i = 0; i < ids.length && at < count; i++) {
    const id = ids[i]!
    kept[at] = id
    at += flags[via[id]! >> shift]!
  }
  return kept.subarray(0, at)
}

/**
 * How many of `ids` each group of `sort` holds, by group: what `selectByGroup` counts first, for a
 * caller that asks for several pages of the same ids and sort to keep and pass as `counted`. A
 * view of a work array the next call reuses: copy it.
 */
export function groupCountsOf(ids: Int32Array, { via, shift, groups }: SortGroups): Int32Array {
  reserveGroups(groups)
  countGroups(ids, via, shift, groups, groupCounts)
  return groupCounts.subarray(0, groups)
}

/** Makes the work arrays by group hold `groups`. */
function reserveGroups(groups: number): void {
  if (slots.length >= groups) return
  const grown = groups + (groups >> 2)
  groupCounts = new Int32Array(grown * LANES)
  taken = new Uint8Array(grown)
  slots = new Int32Array(grown)
}

/** How many of `ids` each group holds, into `counts[0, groups)`. */
function countGroups(
  ids: Int32Array,
  via: Int32Array | Uint16Array,
  shift: number,
  groups: number,
  counts: Int32Array,
): void {
  if (ids.length < LANES_FROM * groups) {
    counts.fill(0, 0, groups)
    for (let i = 0; i < ids.length; i++) counts[via[ids[i]!]! >> shift]!++
    return
  }
  counts.fill(0, 0, LANES * groups)
  const [second, third, fourth] = [groups, 2 * groups, 3 * groups]
  const length = ids.length
  const whole = length - (length % LANES)
  let i = 0
  for (; i < whole; i += LANES) {
    counts[via[ids[i]!]! >> shift]!++
    counts[second + (via[ids[i + 1]!]! >> shift)]!++
    counts[third + (via[ids[i + 2]!]! >> shift)]!++
    counts[fourth + (via[ids[i + 3]!]! >> shift)]!++
  }
  for (; i < length; i++) counts[via[ids[i]!]! >> shift]!++
  for (let group = 0; group < groups; group++) {
    counts[group] =
      counts[group]! + counts[second + group]! + counts[third + group]! + counts[fourth + group]!
  }
}

/** Makes the work arrays hold `length` elements at least. */
function reserve(length: number): void {
  if (keptIds.length >= length) return
  const grown = length + (length >> 2)
  keptIds = new Int32Array(grown)
  keptKeys = new Float64Array(grown)
  bucketOf = new Uint16Array(grown)
}

/** Every id and its key, kept. */
function keepAll(ids: Int32Array, byId: Float64Array): { kept: number; skipped: number } {
  readKeys(ids, byId)
  keptIds.set(ids)
  return { kept: ids.length, skipped: 0 }
}

/**
 * The key of each id into `keptKeys`, in a loop that does nothing else: the reads by id miss the
 * caches, and the processor keeps many of them in flight only while little else is to be done
 * (counting into the buckets in the same loop took longer than this loop and the next one).
 */
function readKeys(ids: Int32Array, byId: Float64Array): void {
  reserve(ids.length)
  for (let i = 0; i < ids.length; i++) keptKeys[i] = byId[ids[i]!]!
}

/**
 * Counts the ids into {@link BUCKETS} buckets of equal key ranges, then keeps those of the
 * buckets holding the places [start, last), in their order, with their keys: their number, and
 * how many ids of lower buckets were passed (the page's places less that many are its places
 * among those kept). The range is that of a sample of the keys; keys outside it count into the
 * first or the last bucket, so that buckets only need to follow the keys' order.
 */
function keepPageBuckets(
  ids: Int32Array,
  byId: Float64Array,
  start: number,
  last: number,
): { kept: number; skipped: number } {
  readKeys(ids, byId)
  const length = ids.length
  let low = Infinity
  let high = -Infinity
  const step = Math.max(1, Math.floor(length / SAMPLE))
  for (let i = 0; i < length; i += step) {
    low = Math.min(low, keptKeys[i]!)
    high = Math.max(high, keptKeys[i]!)
  }
  // A sample of keys all equal: most may be, and buckets would not part them.
  if (!(high > low)) {
    keptIds.set(ids)
    return { kept: length, skipped: 0 }
  }
  const scale = BUCKETS / (high - low)
  counts.fill(0)
  for (let i = 0; i < length; i++) {
    const bucket = Math.min(BUCKETS - 1, Math.max(0, (keptKeys[i]! - low) * scale)) | 0
    bucketOf[i] = bucket
    counts[bucket]!++
  }
  let first = 0
  let skipped = 0
  while (skipped + counts[first]! <= start) skipped += counts[first++]!
  let final = first
  let through = skipped + counts[first]!
  while (through < last) through += counts[++final]!
  // One unsigned comparison for first <= bucket <= final: a third of the time of two.
  const span = final - first
  let kept = 0
  for (let i = 0; i < length; i++) {
    if ((bucketOf[i]! - first) >>> 0 <= span) {
      keptIds[kept] = ids[i]!
      keptKeys[kept++] = keptKeys[i]!
    }
  }
  return { kept, skipped }
}

/** Sorts enough of [lo, hi] that the places [from, to] hold their elements in order. */
function sortPart(
  keys: Float64Array,
  ids: Int32Array,
  lo: number,
  hi: number,
  from: number,
  to: number,
): void {
  while (hi - lo >= SMALL) {
    const [pivotKey, pivotId] = medianOfThree(keys, ids, lo, (lo + hi) >>> 1, hi)
    let i = lo
    let j = hi
    // Hoare's partition: [lo, j] holds no element above the pivot, [i, hi] none below it.
    while (i <= j) {
      while (before(keys[i]!, ids[i]!, pivotKey, pivotId)) i++
      while (before(pivotKey, pivotId, keys[j]!, ids[j]!)) j--
      if (i <= j) {
        swap(keys, ids, i, j)
        i++
        j--
      }
    }
    // Only the sides that hold a place of the page are sorted further; the larger in the loop.
    const left = from <= j
    const right = to >= i
    if (left && right) {
      if (j - lo < hi - i) {
        sortPart(keys, ids, lo, j, from, to)
        lo = i
      } else {
        sortPart(keys, ids, i, hi, from, to)
        hi = j
      }
    } else if (left) {
      hi = j
    } else if (right) {
      lo = i
    } else {
      return
    }
  }
  insertionSort(keys, ids, lo, hi)
}

function before(keyA: number, idA: number, keyB: number, idB: number): boolean {
  return keyA < keyB || (keyA === keyB && idA < idB)
}

function medianOfThree(
  keys: Float64Array,
  ids: Int32Array,
  a: number,
  b: number,
  c: number,
): [number, number] {
  if (before(keys[b]!, ids[b]!, keys[a]!, ids[a]!)) swap(keys, ids, a, b)
  if (before(keys[c]!, ids[c]!, keys[b]!, ids[b]!)) {
    swap(keys, ids, b, c)
    if (before(keys[b]!, ids[b]!, keys[a]!, ids[a]!)) swap(keys, ids, a, b)
  }
  return [keys[b]!, ids[b]!]
}

function insertionSort(keys: Float64Array, ids: Int32Array, lo: number, hi: number): void {
  for (let i = lo + 1; i <= hi; i++) {
    const key = keys[i]!
    const id = ids[i]!
    let j = i - 1
    while (j >= lo && before(key, id, keys[j]!, ids[j]!)) {
      keys[j + 1] = keys[j]!
      ids[j + 1] = ids[j]!
      j--
    }
    keys[j + 1] = key
    ids[j + 1] = id
  }
}

function swap(keys: Float64Array, ids: Int32Array, a: number, b: number): void {
  const key = keys[a]!
  keys[a] = keys[b]!
  keys[b] = key
  const id = ids[a]!
  ids[a] = ids[b]!
  ids[b] = id
}
