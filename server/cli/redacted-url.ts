/** `url` without its password, for test messages; `fallback` when it does not parse. */
export function redactedUrl(url: string, fallback: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password !== '') parsed.password = '***'
    return parsed.toString()
  } catch {
    return fallback
  }
}
