const SECONDS = /^\s*(\d{1,9})\s*$/
const HTTP_DATE = /^\s*[A-Za-z]{3,9}, [-: 0-9A-Za-z]+ GMT\s*$/

/**
 * The wait a `Retry-After` value asks for, in milliseconds (RFC 9110, 10.2.3): whole seconds
 * (`120`, as this server sends), or an HTTP date, counted from `now` and never negative.
 * `undefined` when the header is absent or neither form.
 *
 * @example
 * retryAfterMs('3', Date.now()) // 3000
 */
export function retryAfterMs(value: string | null, now: number): number | undefined {
  if (value === null) return undefined
  const seconds = SECONDS.exec(value)
  if (seconds !== null) return Number(seconds[1]) * 1000
  // The IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) and RFC 850 forms; Date.parse would
  // also read many strings that are not HTTP dates.
  if (!HTTP_DATE.test(value)) return undefined
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}
