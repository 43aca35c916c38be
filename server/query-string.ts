import type { QueryInput } from '../core/beneficiary-service.js'

/**
 * Parses a raw query string (`a=1&b=x+y`) into the first value of each name, decoded
 * (`+` is a space). The result has no prototype, so a parameter named `__proto__` is just a
 * name. Returns `undefined` when a name or value has broken percent-encoding.
 */
export function parseQueryString(query: string): QueryInput | undefined {
  const result: Record<string, string> = Object.create(null) as Record<string, string>
  if (query === '') return result
  let start = 0
  while (start <= query.length) {
    let end = query.indexOf('&', start)
    if (end === -1) end = query.length
    if (end > start) {
      const eq = query.indexOf('=', start)
      const split = eq === -1 || eq > end ? end : eq
      const name = decode(query.slice(start, split))
      const value = split === end ? '' : decode(query.slice(split + 1, end))
      if (name === undefined || value === undefined) return undefined
      if (!(name in result)) result[name] = value
    }
    start = end + 1
  }
  return result
}

function decode(text: string): string | undefined {
  if (!text.includes('%') && !text.includes('+')) return text
  try {
    return decodeURIComponent(text.replaceAll('+', ' '))
  } catch {
    return undefined
  }
}
