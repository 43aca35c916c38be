import type { TransportRefusal } from '../handler.js'

// What node:http's parser tells of a request it refused (its `clientError`), read for the answer
// the node transport gives in its place.

/** What Node's parser reports, as the refusal the client is told about. */
const REFUSAL_BY_CODE: ReadonlyMap<string | undefined, TransportRefusal> = new Map<
  string | undefined,
  TransportRefusal
>([
  ['HPE_HEADER_OVERFLOW', 'headers_too_large'],
  ['ERR_HTTP_REQUEST_TIMEOUT', 'timeout'],
  ['HPE_UNEXPECTED_CONTENT_LENGTH', 'framing'],
  ['HPE_INVALID_CONTENT_LENGTH', 'framing'],
  ['HPE_INVALID_TRANSFER_ENCODING', 'framing'],
])

/** The refusal the client is told about for what Node's parser reported: `malformed` by default. */
export function refusalOf(error: NodeJS.ErrnoException): TransportRefusal {
  return REFUSAL_BY_CODE.get(error.code) ?? 'malformed'
}

/** The longest method a request line may name for the handler to answer it. */
const MAX_METHOD_LENGTH = 32

/** A request line: a method token (RFC 9110, 9.1), a target, and the HTTP/1.x version. */
const REQUEST_LINE = new RegExp(
  `^([!#$%&'*+.^_\`|~0-9A-Za-z-]{1,${MAX_METHOD_LENGTH}}) ([!-~]+) HTTP/1\\.[01]\r?\n`,
)

/**
 * The method and target of the request whose method Node's parser refused, read from the bytes
 * it was parsing (`rawPacket`, the failure at `bytesParsed`); `undefined` when they do not hold
 * a whole request line.
 */
export function requestLine(
  error: NodeJS.ErrnoException & { rawPacket?: Buffer; bytesParsed?: number },
): { method: string; target: string } | undefined {
  const packet = error.rawPacket
  if (packet === undefined) return undefined
  const start = packet.lastIndexOf(10, Math.max(0, (error.bytesParsed ?? 0) - 1)) + 1
  const match = REQUEST_LINE.exec(packet.toString('latin1', start, start + 8192))
  return match === null ? undefined : { method: match[1]!, target: match[2]! }
}
