const ENCODER = new TextEncoder()

/** Bytes the scratch starts with: a page of 100 list items fits (about 23 KiB). */
const INITIAL_BYTES = 64 * 1024
/** Bytes it grows to at most; a longer text is handed over as a string. */
const MAX_BYTES = 4 * 1024 * 1024

/**
 * A response body's UTF-8 bytes, written into one buffer reused from answer to answer, for a
 * native writer that copies them before returning (uWS's `end`). Given a string, uWS measures
 * its UTF-8 length in one pass and encodes it in another (`String::Utf8Value`) into a buffer
 * of its own; `encodeInto` does it in one pass into memory already there. Measured on a page of
 * 50 list items (11,439 characters, two-byte): 14.6 µs against 27.2.
 */
export class Utf8Scratch {
  #bytes = new Uint8Array(INITIAL_BYTES)

  /**
   * The bytes of `text`, valid until the next call; `text` itself when its bytes could pass
   * {@link MAX_BYTES} (3 a UTF-16 unit at most).
   */
  encode(text: string): Uint8Array | string {
    const most = text.length * 3
    if (most > this.#bytes.length) {
      if (most > MAX_BYTES) return text
      this.#bytes = new Uint8Array(Math.max(most, this.#bytes.length * 2))
    }
    const { written } = ENCODER.encodeInto(text, this.#bytes)
    return this.#bytes.subarray(0, written)
  }
}
