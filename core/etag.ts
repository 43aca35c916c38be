/** The strong ETag of a beneficiary version (D23), quoted as HTTP writes it. */
export function etagOf(version: number): string {
  return `"v${version}"`
}

/**
 * The strong ETag of a beneficiary's history holding `total` entries. A history only grows while
 * its record exists (one entry per change, D27; a DELETE makes it a 404 for good, ids are never
 * reused), so its entry count pins every page of it: the same count, the same bytes.
 */
export function historyEtagOf(total: number): string {
  return `"h${total}"`
}

/**
 * Whether an `If-Match` value admits the current ETag (RFC 9110 13.1.1): `*` matches any current
 * representation; otherwise one of the listed tags must be strongly equal (weak tags never match).
 */
export function ifMatchAdmits(ifMatch: string, currentEtag: string): boolean {
  const value = ifMatch.trim()
  if (value === '*') return true
  return value.split(',').some((tag) => tag.trim() === currentEtag)
}
