/** A transport's response as `writeStream` writes a streamed body to it. */
export interface StreamTarget {
  /** Whether the client went away. */
  gone(): boolean
  /** Writes `chunk`; `false` when the socket buffered it, and the next must wait. */
  write(chunk: Uint8Array): boolean
  /** Settles once the socket has sent what it buffered, or the client went away. */
  writable(): Promise<void>
  /** Ends the answer. */
  end(): void
  /** Cuts the connection, which the client reads as a broken answer. */
  cut(): void
}

/**
 * Writes a streamed body (an export) chunk by chunk, the next only once the socket took the last
 * (`writable`), so that a slow client holds the stream back instead of filling memory. A client
 * that goes away ends the stream (its `return()`, which releases what it holds); a stream that
 * fails midway, its status long sent, cuts the connection.
 */
export async function writeStream(
  stream: AsyncIterable<Uint8Array>,
  target: StreamTarget,
): Promise<void> {
  try {
    for await (const chunk of stream) {
      if (target.gone()) break
      if (!target.write(chunk) && !target.gone()) {
        await target.writable()
      } else {
        // A chunk is made synchronously (a page read and serialised): between two, the event
        // loop reads and serves the other requests, which a fast reader would starve.
        await new Promise((resolve) => setImmediate(resolve))
      }
      if (target.gone()) break
    }
    if (!target.gone()) target.end()
  } catch {
    if (!target.gone()) target.cut()
  }
}
