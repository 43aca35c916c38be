/**
 * Whether an `If-None-Match` field value names `etag`, the current ETag of the representation
 * (RFC 9110 13.1.2): `*` names any current representation; otherwise one entity-tag of the list
 * must match by the weak comparison, which ignores a `W/` prefix on either side. Members that are
 * not entity-tags (a stray token, an unterminated quote) match nothing.
 *
 * @example
 * ifNoneMatchHits('W/"v3", "v4"', '"v4"') // true
 * ifNoneMatchHits('"v3"', '"v4"') // false
 */
export function ifNoneMatchHits(field: string | undefined, etag: string): boolean {
  if (field === undefined) return false
  const value = field.trim()
  if (value === '*') return true
  const opaque = etag.startsWith('W/') ? etag.slice(2) : etag
  let at = 0
  while (at < value.length) {
    const char = value[at]
    if (char === ',' || char === ' ' || char === '\t') {
      at++
      continue
    }
    const quote = value.startsWith('W/"', at) ? at + 2 : char === '"' ? at : -1
    const close = quote === -1 ? -1 : value.indexOf('"', quote + 1)
    if (close === -1) {
      // Not an entity-tag: skip the member.
      const comma = value.indexOf(',', at)
      if (comma === -1) return false
      at = comma + 1
      continue
    }
    if (value.slice(quote, close + 1) === opaque) return true
    at = close + 1
  }
  return false
}
