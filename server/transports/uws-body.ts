import type { Exchange } from './uws-exchange.js'
import { RefusedBody } from './refused-body.js'

/** What `readBody` settles with instead of a body. */
export const TOO_LARGE = Symbol('too large')
export const TIMED_OUT = Symbol('timed out')

/**
 * Reads the body of the uws transport's `exchange` from uWS directly, in place of
 * hyper-express's readers (their stream stalls on chunked bodies past its high-water mark):
 * into one buffer of the announced `length`, or chunk by chunk up to `cap`. Settles once, with
 * whichever comes first: the whole body, `TOO_LARGE` once the cap is passed, or `TIMED_OUT`
 * after `timeoutMs` (`requestTimeoutMs`); so a body that arrives in the turn its time ran out
 * cannot be handled after its 408 was decided. The connection of a `write` is paused once its
 * body is read (see `HyperExpressTransport#hold`).
 */
export function readBody(
  exchange: Exchange,
  length: number | undefined,
  write: boolean,
  cap: number,
  timeoutMs: number,
): Promise<Uint8Array | typeof TOO_LARGE | typeof TIMED_OUT> {
  const res = exchange.res
  return new Promise((resolve) => {
    let size = 0
    const whole = length === undefined ? undefined : new Uint8Array(length)
    const chunks: Uint8Array[] = []
    const timer = setTimeout(resolve, timeoutMs, TIMED_OUT).unref()
    // Past the cap, the rest is read and dropped before the 413 (one onData callback: uWS
    // cannot swap it from inside itself).
    let rest: RefusedBody | undefined
    res.raw.onData((chunk: ArrayBuffer, last: boolean) => {
      if (rest !== undefined) return rest.take(chunk.byteLength, last)
      // uWS reuses the chunk's memory after this callback: copy it.
      const bytes = new Uint8Array(chunk)
      if (
        size + bytes.byteLength > cap ||
        (whole !== undefined && size + bytes.byteLength > whole.byteLength)
      ) {
        chunks.length = 0
        clearTimeout(timer)
        rest = new RefusedBody(() => resolve(TOO_LARGE), timeoutMs)
        return rest.take(bytes.byteLength, last)
      }
      if (whole === undefined) chunks.push(bytes.slice())
      else whole.set(bytes, size)
      size += bytes.byteLength
      if (last) {
        clearTimeout(timer)
        // A write's connection is read no further until it is answered; paused here, in the
        // read that completed the body, before any later read.
        if (write) {
          res.raw.pause()
          exchange.held = true
        }
        resolve(whole ?? concat(chunks, size))
      }
    })
  })
}

function concat(chunks: readonly Uint8Array[], size: number): Uint8Array {
  const whole = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    whole.set(chunk, offset)
    offset += chunk.byteLength
  }
  return whole
}
