/**
 * `url` as logs and messages may show it: without its password (D25), or `unparsable` when it
 * does not parse, so that a mistyped URL holding a password is never repeated either.
 */
export function redactedUrl(url: string, unparsable: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password !== '') parsed.password = '***'
    return parsed.toString()
  } catch {
    return unparsable
  }
}
