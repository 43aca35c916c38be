/** The handler's answer, which the transport writes out as it is. */
export interface ApiResponse {
  /** The HTTP status code. */
  readonly status: number
  /** Header values by lower-case name. */
  readonly headers: Readonly<Record<string, string>>
  /** The serialised body, as text or as UTF-8 bytes; `undefined` for 204. */
  readonly body: string | Uint8Array | undefined
}
