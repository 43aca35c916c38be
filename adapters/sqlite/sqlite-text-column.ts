/** Bytes of text held at least before the garbage of replaced texts is compacted away. */
const COMPACT_FROM = 1 << 20

/**
 * A short text (or null) by id, for a million records: every text's UTF-8 bytes in one buffer,
 * where it starts and its length in typed arrays by id. Outside the JavaScript heap, so the
 * garbage collector has two million fewer strings to mark at each full collection; a text is
 * decoded when read (about 0.1 µs). A text replaced leaves its old bytes behind until they are
 * as many as the live ones, then the buffer is compacted (a copy of the live bytes).
 */
export class SqliteTextColumn {
  #bytes = Buffer.alloc(0)
  #used = 0
  #garbage = 0
  #start = new Int32Array(0)
  /** Bytes of each id's text, or -1 for null (and for no text). */
  #length = new Int32Array(0)

  /** Holds ids below `capacity` (the arrays by id grow with the records' copy). */
  grow(capacity: number): void {
    if (capacity <= this.#start.length) return
    const start = new Int32Array(capacity)
    start.set(this.#start)
    const length = new Int32Array(capacity).fill(-1)
    length.set(this.#length)
    this.#start = start
    this.#length = length
  }

  /** Bytes held, replaced texts' included until compacted. */
  get bytes(): number {
    return this.#used
  }

  get(id: number): string | null {
    const length = this.#length[id]!
    if (length < 0) return null
    const start = this.#start[id]!
    return this.#bytes.toString('utf8', start, start + length)
  }

  /** Sets the text of `id` (below the capacity). */
  set(id: number, text: string | null): void {
    if (this.#length[id]! > 0) this.#garbage += this.#length[id]!
    if (text === null) {
      this.#length[id] = -1
      return
    }
    const needed = Buffer.byteLength(text)
    if (this.#used + needed > this.#bytes.length) this.#makeRoom(needed)
    this.#start[id] = this.#used
    this.#length[id] = this.#bytes.write(text, this.#used)
    this.#used += this.#length[id]!
  }

  /** Forgets the text of `id`. */
  delete(id: number): void {
    this.set(id, null)
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
    let used = 0
    for (let id = 0; id < this.#length.length; id++) {
      const length = this.#length[id]!
      if (length <= 0) continue
      this.#bytes.copy(bytes, used, this.#start[id]!, this.#start[id]! + length)
      this.#start[id] = used
      used += length
    }
    this.#bytes = bytes
    this.#used = used
    this.#garbage = 0
  }
}
