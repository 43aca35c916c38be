/**
 * JSON with object keys sorted at every level, so that equal values always give equal text
 * (idempotency fingerprints, change detection of `address` and `metadata`).
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  const entries = Object.keys(value)
    .sort()
    .map(
      (key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`,
    )
  return `{${entries.join(',')}}`
}
