/** Bytes of text held at least before the garbage of replaced texts is compacted away. */
const COMPACT_FROM = 1 << 20

/**
 * A few short texts (each or null) by id, for a million records: every text's UTF-8 bytes in one
 * buffer, one id's texts one after the other, and by id where they start and each one's length,
 * side by side in one typed array. Outside the JavaScript heap, so the garbage collector has two
 * million fewer strings to mark at each full collection; a text is decoded when read. A page's
 * records lie anywhere, and reading them is mostly waiting on memory: an id's texts cost one
 * read of its place and lengths and one of its bytes, where a column a text cost three reads
 * each (a page of 50 records sorted by name: about 0.7 µs a record with two columns). A text
 * replaced leaves its old bytes behind until they are as many as the live ones, then the buffer
 * is compacted (a copy of the live bytes).
 */
export class SqliteTextColumn {
  readonly #fields: number
  #bytes = Buffer.alloc(0)
  #used = 0
  #garbage = 0
  /** By id, `1 + fields` numbers: where its bytes start, then each text's length (-1: null). */
  #slots = new Int32Array(0)

  /** Holds `fields` texts an id (for instance 2: an e-mail and a phone). */
  constructor(fields = 1) {
    this.#fields = fields
  }

  /** Holds ids below `capacity` (the arrays by id grow with the records' copy). */
  grow(capacity: number): void {
    const width = this.#fields + 1
    if (capacity * width <= this.#slots.length) return
    const slots = new Int32Array(capacity * width).fill(-1)
    slots.set(this.#slots)
    this.#slots = slots
  }

  /** Bytes held, replaced texts' included until compacted. */
  get bytes(): number {
    return this.#used
  }

  /** The text `field` (from 0) of `id`. */
  get(id: number, field = 0): string | null {
    const slot = id * (this.#fields + 1)
    const length = this.#slots[slot + 1 + field]!
    if (length < 0) return null
    let start = this.#slots[slot]!
    for (let before = 0; before < field; before++)
      start += Math.max(0, this.#slots[slot + 1 + before]!)
    return this.#bytes.toString('utf8', start, start + length)
  }

  /** Sets the texts of `id` (below the capacity), one a field. */
  set(id: number, ...texts: (string | null)[]): void {
    const slot = id * (this.#fields + 1)
    // The old texts are garbage, and not copied if making room compacts.
    this.delete(id)
    let needed = 0
    for (const text of texts) needed += text === null ? 0 : Buffer.byteLength(text)
    if (this.#used + needed > this.#bytes.length) this.#makeRoom(needed)
    this.#slots[slot] = this.#used
    for (let field = 0; field < this.#fields; field++) {
      const text = texts[field] ?? null
      this.#slots[slot + 1 + field] = text === null ? -1 : this.#bytes.write(text, this.#used)
      this.#used += Math.max(0, this.#slots[slot + 1 + field]!)
    }
  }

  /** Forgets the texts of `id`. */
  delete(id: number): void {
    const slot = id * (this.#fields + 1)
    this.#garbage += this.#held(slot)
    this.#slots.fill(-1, slot + 1, slot + 1 + this.#fields)
  }

  /** The bytes the texts of the id at `slot` hold. */
  #held(slot: number): number {
    let bytes = 0
    for (let field = 0; field < this.#fields; field++) {
      bytes += Math.max(0, this.#slots[slot + 1 + field]!)
    }
    return bytes
  }

  #makeRoom(needed: number): void {
    const live = this.#used - this.#garbage
    if (this.#garbage >= live && this.#used >= COMPACT_FROM) {
      this.#compact(Math.max(live + needed, live * 2))
      if (this.#used + needed <= this.#bytes.length) return
    }
    const grown = Buffer.allocUnsafe(Math.max(1024, (this.#used + needed) * 2))
    this.#bytes.copy(grown, 0, 0, this.#used)
    this.#bytes = grown
  }

  /** Copies the live texts into a new buffer of `size` bytes, in id order. */
  #compact(size: number): void {
    const bytes = Buffer.allocUnsafe(size)
    const width = this.#fields + 1
    let used = 0
    for (let slot = 0; slot < this.#slots.length; slot += width) {
      const length = this.#held(slot)
      if (length > 0) this.#bytes.copy(bytes, used, this.#slots[slot]!, this.#slots[slot]! + length)
      this.#slots[slot] = used
      used += length
    }
    this.#bytes = bytes
    this.#used = used
    this.#garbage = 0
  }
}
