import type { Request } from 'hyper-express'

// The checks of a request's head that the uws transport makes itself, since this uWS build
// neither counts a head against a limit nor refuses ambiguous framing (RFC 9112, 6.3).

/**
 * The bytes of a request's target, header names and values, as node:http counts them against
 * its limit. A loop over the parsed headers, without allocation: it runs for every request.
 */
export function headBytes(req: Request, headers: Readonly<Record<string, string>>): number {
  // uWS has no query (`undefined`, whatever the typings say) when the target has no `?`.
  const query = req.path_query as string | undefined
  let bytes = req.path.length + (query === undefined ? 0 : query.length + 1)
  for (const name in headers) bytes += name.length + headers[name]!.length
  return bytes
}

/**
 * Whether the body's length is told one way only (RFC 9112, 6.3): one Content-Length of digits,
 * or one Transfer-Encoding that is `chunked`. The framework keeps the last of repeated headers,
 * uWS reads the first: the raw list tells them apart. Run only for requests with either header,
 * inside the uWS callback, while the raw request is alive.
 */
export function hasSoundFraming(req: Request): boolean {
  let fields = 0
  let sound = true
  req.raw.forEach((name: string, value: string) => {
    if (name === 'content-length') {
      fields++
      if (!isDigits(value)) sound = false
    } else if (name === 'transfer-encoding') {
      fields++
      if (value.trim().toLowerCase() !== 'chunked') sound = false
    }
  })
  return sound && fields === 1
}

function isDigits(text: string): boolean {
  if (text.length === 0) return false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 48 || c > 57) return false
  }
  return true
}
