/** Slots of a `SecondSight`: 256 KB, a key's first sight outlives 65,536 other keys' on average. */
const SLOTS = 1 << 16

/**
 * Which keys came back: a key's hash, one slot by hash, so that a cache can take in only what is
 * asked for a second time (a user paging through a list, or sorting it again), and a one-off
 * request leaves nothing behind. The benchmark's random lists ask for one key in fifty again;
 * every key kept (its string, its map entry, its ids copied) outlived two young collections and
 * was moved into the old generation, which grew 2.1 MB a second under them (searches with
 * filters, 50 connections), 0.9 MB once only keys asked for again were kept: a full collection,
 * and its pause, less than half as often. A slot holds one hash at a time, so a key whose slot
 * another took meanwhile is taken for a first sight again; two keys with one hash, for a second.
 */
export class SecondSight {
  readonly #hashes = new Int32Array(SLOTS)

  /** Whether `key` was seen before (since its slot last held another): remembered either way. */
  again(key: string): boolean {
    // FNV-1a, never 0 (the empty slot).
    let hash = 0x811c9dc5
    for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193)
    hash |= 1
    const slot = (hash ^ (hash >>> 16)) & (SLOTS - 1)
    if (this.#hashes[slot] === hash) return true
    this.#hashes[slot] = hash
    return false
  }
}
