/** The handler's answer, which the transport writes out as it is. */
export interface ApiResponse {
  /** The HTTP status code. */
  readonly status: number
  /** Header values by lower-case name. */
  readonly headers: Readonly<Record<string, string>>
  /** The serialised body, as text or as UTF-8 bytes; `undefined` for 204. */
  readonly body: string | Uint8Array | undefined
  /**
   * A body written as it is made (an export, D39), in place of `body`: without a length
   * (chunked), each chunk written once the client took the last, so that a slow reader holds
   * the writer back rather than filling the server's memory. Left unread for a HEAD; left
   * early (`return()`) when the client goes away.
   */
  readonly stream?: AsyncIterable<Uint8Array> | undefined
}

/** The value of a `Result` whose answer is a stream: its media type and its chunks. */
export class StreamedBody {
  readonly contentType: string
  readonly chunks: AsyncIterable<Uint8Array>

  constructor(contentType: string, chunks: AsyncIterable<Uint8Array>) {
    this.contentType = contentType
    this.chunks = chunks
  }
}
