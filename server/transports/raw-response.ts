import { STATUS_CODES } from 'node:http'
import type { ApiResponse } from '../api-response.js'

/**
 * A whole HTTP/1.1 response as bytes, with its length and `Connection: close`: for a transport
 * that must answer on a bare socket, when no response object exists (node:http's `clientError`).
 */
export function rawResponse(response: ApiResponse): Buffer {
  const body =
    typeof response.body === 'string' ? Buffer.from(response.body, 'utf8') : response.body
  const length = body?.byteLength ?? 0
  let head = `HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? 'Unknown'}\r\n`
  for (const name in response.headers) head += `${name}: ${response.headers[name]!}\r\n`
  head += `content-length: ${length}\r\nconnection: close\r\n\r\n`
  const bytes = Buffer.from(head, 'latin1')
  return body === undefined ? bytes : Buffer.concat([bytes, body])
}
