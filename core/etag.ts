/** The strong ETag of a beneficiary version (D23), quoted as HTTP writes it. */
export function etagOf(version: number): string {
  return `"v${version}"`
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
