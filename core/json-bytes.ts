import { isoTime, writeIsoTime } from './time.js'
import { utf8Encoder } from './utf8.js'

const QUOTE = 0x22
const BACKSLASH = 0x5c
const ZERO = 0x30
/** Below it, a character needs an escape in a JSON string (RFC 8259 7). */
const CONTROL_END = 0x20
/** Above it, a UTF-16 unit is not ASCII. */
const ASCII_END = 0x80

/**
 * A JSON text written as UTF-8 bytes, piece by piece, into one growing buffer: what
 * `JSON.stringify` and a UTF-8 encoding of its result would make, without the intermediate
 * objects and string. A page of list items was a fifth to a third of a list request's CPU as
 * objects (`listItemOf`), `JSON.stringify` and the encoding of its text. Strings are escaped
 * exactly as `JSON.stringify` escapes them. The writer is reused: `take` copies out what was
 * written and starts again.
 */
export class JsonBytes {
  #bytes: Uint8Array
  #length = 0

  constructor(initialBytes = 16 * 1024) {
    this.#bytes = new Uint8Array(initialBytes)
  }

  /** Bytes written since the last `take`. */
  get length(): number {
    return this.#length
  }

  /** Forgets what was written: the start of each text, should an earlier one have failed midway. */
  reset(): void {
    this.#length = 0
  }

  /** A copy of the bytes written, after which the writer is empty. */
  take(): Uint8Array {
    const bytes = this.#bytes.slice(0, this.#length)
    this.#length = 0
    return bytes
  }

  /** Bytes that are JSON already (punctuation, keys), as they are. */
  raw(bytes: Uint8Array): void {
    this.#room(bytes.length)
    this.#bytes.set(bytes, this.#length)
    this.#length += bytes.length
  }

  /** JSON text made elsewhere (`JSON.stringify`), as UTF-8. */
  text(json: string): void {
    this.#room(json.length * 3)
    this.#length += utf8Encoder.encodeInto(json, this.#bytes.subarray(this.#length)).written
  }

  /** One ASCII character of JSON, by its code. */
  char(code: number): void {
    this.#room(1)
    this.#bytes[this.#length++] = code
  }

  /** A number, as `JSON.stringify` writes it. */
  number(value: number): void {
    if (!Number.isSafeInteger(value) || value < 0) {
      this.#ascii(JSON.stringify(value))
      return
    }
    let digits = 1
    for (let power = 10; power <= value; power *= 10) digits++
    this.#room(digits)
    const bytes = this.#bytes
    let at = (this.#length += digits)
    do {
      const rest = Math.floor(value / 10)
      bytes[--at] = ZERO + (value - rest * 10)
      value = rest
    } while (value > 0)
  }

  /** A string, or `null`. */
  string(text: string | null): void {
    if (text === null) {
      this.#ascii('null')
      return
    }
    const length = text.length
    this.#room(length + 2)
    const bytes = this.#bytes
    let at = this.#length
    bytes[at++] = QUOTE
    for (let i = 0; i < length; i++) {
      const code = text.charCodeAt(i)
      if (code >= ASCII_END || code < CONTROL_END || code === QUOTE || code === BACKSLASH) {
        // Beyond plain ASCII: `JSON.stringify` escapes it (lone surrogates included), and the
        // encoder writes the result's UTF-8.
        this.#escaped(text)
        return
      }
      bytes[at++] = code
    }
    bytes[at++] = QUOTE
    this.#length = at
  }

  /** Epoch milliseconds as the string `isoTime` makes of them. */
  isoTime(ms: number): void {
    this.#room(26)
    const at = this.#length
    if (!writeIsoTime(ms, this.#bytes, at + 1)) {
      this.string(isoTime(ms))
      return
    }
    this.#bytes[at] = QUOTE
    this.#bytes[at + 25] = QUOTE
    this.#length = at + 26
  }

  #escaped(text: string): void {
    this.text(JSON.stringify(text))
  }

  #ascii(text: string): void {
    this.#room(text.length)
    for (let i = 0; i < text.length; i++) this.#bytes[this.#length++] = text.charCodeAt(i)
  }

  #room(more: number): void {
    const needed = this.#length + more
    if (needed <= this.#bytes.length) return
    const grown = new Uint8Array(Math.max(needed, this.#bytes.length * 2))
    grown.set(this.#bytes.subarray(0, this.#length))
    this.#bytes = grown
  }
}

/**
 * A value already serialised as JSON, in UTF-8: what a server sends as the body as it is, where
 * it would send `JSON.stringify` of any other value.
 */
export class SerializedJson {
  readonly bytes: Uint8Array

  constructor(bytes: Uint8Array) {
    this.bytes = bytes
  }
}
