/** Deepest nesting of arrays and objects a body may have (D12). */
export const MAX_JSON_DEPTH = 32

/** What `parseJsonBody` found: the value, or why the body is refused (400, D12). */
export type JsonBodyResult =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly message: string }

const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * Whether a `Content-Type` names JSON: `application/json` or any `application/*+json`, with no
 * charset or UTF-8 (RFC 8259 allows no other).
 */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false
  const semicolon = header.indexOf(';')
  const type = (semicolon === -1 ? header : header.slice(0, semicolon)).trim().toLowerCase()
  if (type !== 'application/json' && !(type.startsWith('application/') && type.endsWith('+json'))) {
    return false
  }
  if (semicolon === -1) return true
  for (const parameter of header.slice(semicolon + 1).split(';')) {
    const eq = parameter.indexOf('=')
    if (eq === -1 || parameter.slice(0, eq).trim().toLowerCase() !== 'charset') continue
    const charset = parameter
      .slice(eq + 1)
      .trim()
      .replaceAll('"', '')
      .toLowerCase()
    if (charset !== 'utf-8' && charset !== 'utf8') return false
  }
  return true
}

/**
 * Decodes and parses a request body (D12): invalid UTF-8, malformed JSON and nesting deeper than
 * `MAX_JSON_DEPTH` are refused. `JSON.parse` makes every key, `__proto__` included, an own
 * property, so a body cannot reach a prototype as long as nothing copies it with spread or
 * `Object.assign` (the core refuses those keys anyway, D8).
 */
export function parseJsonBody(bytes: Uint8Array): JsonBodyResult {
  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    return { ok: false, message: 'The request body is not valid UTF-8.' }
  }
  if (nestingDepth(text) > MAX_JSON_DEPTH) {
    return {
      ok: false,
      message: `The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`,
    }
  }
  try {
    return { ok: true, value: JSON.parse(text) as unknown }
  } catch {
    return { ok: false, message: 'The request body is not valid JSON.' }
  }
}

/** The deepest bracket nesting outside strings; runs before parsing so nothing deep is built. */
function nestingDepth(text: string): number {
  let depth = 0
  let max = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92)
        i++ // backslash: skip the escaped character
      else if (c === 34) inString = false
    } else if (c === 34) {
      inString = true
    } else if (c === 123 || c === 91) {
      if (++depth > max) {
        max = depth
        if (max > MAX_JSON_DEPTH) return max
      }
    } else if (c === 125 || c === 93) {
      depth--
    }
  }
  return max
}
