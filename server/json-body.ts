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

/** The longest key path a duplicate-key refusal quotes; a longer one is cut. */
const MAX_NAMED_PATH = 200

/**
 * Decodes and parses a request body (D12): invalid UTF-8, malformed JSON, nesting deeper than
 * `MAX_JSON_DEPTH` and a key given twice in one object (`{"first_name":"A","first_name":"B"}`,
 * which `JSON.parse` would quietly read as its last value) are refused, the key named by its
 * dotted path (`address.city`). `JSON.parse` makes every key, `__proto__` included, an own
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
  const shape = scanShape(text)
  if (shape === TOO_DEEP) {
    return {
      ok: false,
      message: `The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`,
    }
  }
  let value: unknown
  try {
    value = JSON.parse(text) as unknown
  } catch {
    return { ok: false, message: 'The request body is not valid JSON.' }
  }
  if (shape !== undefined) {
    const path = shape.length > MAX_NAMED_PATH ? `${shape.slice(0, MAX_NAMED_PATH)}…` : shape
    return { ok: false, message: `The request body has the key ${JSON.stringify(path)} twice.` }
  }
  return { ok: true, value }
}

const TOO_DEEP = Symbol('too deep')

/**
 * One pass over the text, before it is parsed, so that nothing deep is built: `TOO_DEEP` past
 * `MAX_JSON_DEPTH` levels of brackets outside strings, else the path of the first key repeated
 * within one object (escapes decoded: `"a"` and `"\u0061"` are one key), else `undefined`.
 * Run on text that may not be JSON at all: the caller believes a repeated key only once
 * `JSON.parse` has taken the text.
 */
function scanShape(text: string): string | typeof TOO_DEEP | undefined {
  // Per open container: its keys so far (an object) or null (an array); the segment that leads
  // to it; the key most recently read in it, or its element index.
  const keys: (Set<string> | null)[] = []
  const segments: string[] = []
  const current: (string | number)[] = []
  let duplicate: string | undefined
  // The last character outside strings that was not whitespace: a string right after `{` or
  // `,` inside an object is a key.
  let last = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 34) {
      const start = i + 1
      let escaped = false
      for (i = start; i < text.length; i++) {
        const d = text.charCodeAt(i)
        if (d === 92) {
          escaped = true
          i++ // the escaped character
        } else if (d === 34) {
          break
        }
      }
      const depth = keys.length - 1
      const own = keys[depth]
      if (own != null && (last === 123 || last === 44) && duplicate === undefined) {
        const key = escaped ? decodeKey(text.slice(start - 1, i + 1)) : text.slice(start, i)
        if (key !== undefined) {
          if (own.has(key)) duplicate = [...segments.slice(1), key].join('.')
          else own.add(key)
          current[depth] = key
        }
      }
      last = 34
    } else if (c === 123 || c === 91) {
      if (keys.length === MAX_JSON_DEPTH) return TOO_DEEP
      const parent = current[current.length - 1]
      segments.push(parent === undefined ? '' : String(parent))
      keys.push(c === 123 ? new Set() : null)
      current.push(c === 123 ? '' : 0)
      last = c
    } else if (c === 125 || c === 93) {
      keys.pop()
      segments.pop()
      current.pop()
      last = c
    } else if (c === 44) {
      const depth = current.length - 1
      if (keys[depth] === null) current[depth] = (current[depth] as number) + 1
      last = c
    } else if (c !== 32 && c !== 9 && c !== 10 && c !== 13) {
      last = c
    }
  }
  return duplicate
}

/** A key written with escapes, as `JSON.parse` reads it; `undefined` when it is not JSON. */
function decodeKey(quoted: string): string | undefined {
  try {
    return JSON.parse(quoted) as string
  } catch {
    return undefined
  }
}
