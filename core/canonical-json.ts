/**
 * JSON with object keys sorted at every level, so that equal values always give equal text
 * (idempotency fingerprints, change detection of `address` and `metadata`). Built by
 * concatenation: arrays of parts and joins cost a create a third more here.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) {
    let text = '['
    for (let i = 0; i < value.length; i++) text += (i === 0 ? '' : ',') + canonicalJson(value[i])
    return `${text}]`
  }
  const object = value as Record<string, unknown>
  const keys = Object.keys(object).sort()
  let text = '{'
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!
    text += `${i === 0 ? '' : ','}${JSON.stringify(key)}:${canonicalJson(object[key])}`
  }
  return `${text}}`
}
