import { randomUUID } from 'node:crypto'

const MAX_LENGTH = 128

/**
 * The request id of a response (D24): the client's `X-Request-Id` when it is sane (1–128
 * characters of `A–Z a–z 0–9 . _ : -`, so it is safe in logs and headers), else a new UUID.
 */
export function requestIdFor(header: string | undefined): string {
  return header !== undefined && isSaneRequestId(header) ? header : randomUUID()
}

/** Whether a client-sent request id may be echoed and logged as it is. */
export function isSaneRequestId(value: string): boolean {
  const length = value.length
  if (length === 0 || length > MAX_LENGTH) return false
  for (let i = 0; i < length; i++) {
    const c = value.charCodeAt(i)
    const ok =
      (c >= 97 && c <= 122) || // a-z
      (c >= 65 && c <= 90) || // A-Z
      (c >= 48 && c <= 58) || // 0-9 and ':'
      c === 45 || // -
      c === 46 || // .
      c === 95 // _
    if (!ok) return false
  }
  return true
}
