/** Below this many elements a range is finished by insertion sort. */
const SMALL = 16
/** From this many elements on, a page is first narrowed down by a histogram of the keys. */
const BUCKETED_FROM = 2048
/** Buckets of that histogram (16 KB of counts: it stays in the first-level cache). */
const BUCKETS = 4096
const counts = new Int32Array(BUCKETS)
/** The bucket of each element, from the count to the keeping (grown as needed). */
let bucketOf = new Uint16Array(0)
/** Keys sampled for the range the buckets divide. */
const SAMPLE = 512

/**
 * The ids at places [start, end) of `ids` sorted by (`keys`, id) ascending, in that order, where
 * `keys[i]` is the sort key of `ids[i]`: the page of a sorted list, found without sorting the
 * rest. Many elements are first counted into buckets of equal key ranges (two passes over the
 * keys in order, about 2.5 ns an element), and only the elements of the buckets that hold the
 * page's places are kept; then a partial quicksort, which only descends into the parts that hold
 * a place of the page (about three comparisons an element, 15 ns). Ids are distinct, so no two
 * elements tie. Both arrays are reordered.
 */
export function selectPage(
  keys: Float64Array,
  ids: Int32Array,
  start: number,
  end: number,
): number[] {
  const last = Math.min(end, ids.length)
  if (start >= last) return []
  let length = ids.length
  let skipped = 0
  if (length >= BUCKETED_FROM) ({ length, skipped } = keepPageBuckets(keys, ids, start, last))
  sortPart(keys, ids, 0, length - 1, start - skipped, last - 1 - skipped)
  return Array.from(ids.subarray(start - skipped, last - skipped))
}

/**
 * Counts the elements into {@link BUCKETS} buckets of equal key ranges, then moves those of the
 * buckets holding the places [start, last) to the front of both arrays, in their order: their
 * number, and how many elements of lower buckets were passed (the page's places less that many
 * are its places among the elements kept). The range is that of a sample of the keys; keys
 * outside it count into the first or the last bucket, so that buckets only need to follow the
 * keys' order, and a pass over all keys to find their range is saved.
 */
function keepPageBuckets(
  keys: Float64Array,
  ids: Int32Array,
  start: number,
  last: number,
): { length: number; skipped: number } {
  let low = Infinity
  let high = -Infinity
  const step = Math.max(1, Math.floor(keys.length / SAMPLE))
  for (let i = 0; i < keys.length; i += step) {
    low = Math.min(low, keys[i]!)
    high = Math.max(high, keys[i]!)
  }
  // A sample of keys all equal: most may be, and buckets would not part them.
  if (!(high > low)) return { length: ids.length, skipped: 0 }
  const scale = BUCKETS / (high - low)
  const length = keys.length
  if (bucketOf.length < length) bucketOf = new Uint16Array(length + (length >> 2))
  counts.fill(0)
  for (let i = 0; i < length; i++) {
    const bucket = Math.min(BUCKETS - 1, Math.max(0, (keys[i]! - low) * scale)) | 0
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
      keys[kept] = keys[i]!
      ids[kept++] = ids[i]!
    }
  }
  return { length: kept, skipped }
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
