/**
 * The token of an `Authorization: Bearer …` header, or `undefined` when there is none. The
 * scheme is case-insensitive (RFC 9110); any other scheme is no token at all.
 */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined
  if (header.length < 8 || header.slice(0, 7).toLowerCase() !== 'bearer ') return undefined
  const token = header.slice(7).trim()
  return token === '' ? undefined : token
}
