import type { Route, RouteParams } from './route.js'

/** All the routes of one path. */
export interface PathEntry {
  /** The full OpenAPI template, base path included: `/v3/beneficiaries/{id}`. */
  readonly template: string
  /** The pattern logged instead of the raw path: `/v3/beneficiaries/:id`. */
  readonly pattern: string
  /** Value of the `Allow` header of a 405 on this path. */
  readonly allow: string
  /** The route of each method the path answers; HEAD is the GET route (D28). */
  readonly routes: Readonly<Partial<Record<string, Route>>>
}

/** A matched path, with the raw values of its template's `{name}` segments, in order. */
export interface RouteMatch {
  readonly entry: PathEntry
  readonly params: RouteParams
}

const NO_PARAMS: RouteParams = Object.freeze([])

/**
 * Finds the routes of a path. Templates are compiled once, at construction; a request costs a
 * map lookup for a path without parameters, else a few string comparisons (no regular
 * expression per request). A `{name}` segment matches one non-empty segment, taken raw.
 *
 * @example
 * const table = new RouteTable('/v3', ROUTES)
 * table.match('/v3/beneficiaries/42/status') // { entry: { pattern: '/v3/beneficiaries/:id/status', … }, params: ['42'] }
 */
export class RouteTable {
  readonly basePath: string
  readonly #static: ReadonlyMap<string, RouteMatch>
  readonly #groups: readonly TemplateGroup[]
  readonly #entries: readonly PathEntry[]

  /** @throws TypeError when `basePath` is not empty or `/segment[/segment…]` without a trailing slash. */
  constructor(basePath: string, routes: readonly Route[]) {
    if (!isValidBasePath(basePath)) {
      throw new TypeError(
        `basePath must be empty or look like /v3 (got ${JSON.stringify(basePath)})`,
      )
    }
    this.basePath = basePath
    const byTemplate = new Map<string, Record<string, Route>>()
    for (const route of routes) {
      const template = route.versioned ? basePath + route.path : route.path
      // No prototype: a method such as `constructor` must not find anything.
      const methods = byTemplate.get(template) ?? (Object.create(null) as Record<string, Route>)
      methods[route.method] = route
      byTemplate.set(template, methods)
    }
    const statics = new Map<string, RouteMatch>()
    const groups = new Map<string, TemplateGroup>()
    const entries: PathEntry[] = []
    for (const [template, declared] of byTemplate) {
      const methods = withHead(declared)
      const entry: PathEntry = Object.freeze({
        template,
        pattern: template.replaceAll(/\{([^}]*)\}/g, ':$1'),
        allow: Object.keys(methods).join(', '),
        routes: Object.freeze(methods),
      })
      entries.push(entry)
      const pieces = literalPieces(template)
      if (pieces.length === 1) {
        statics.set(template, Object.freeze({ entry, params: NO_PARAMS }))
      } else {
        const head = pieces[0]!
        const group = groups.get(head) ?? new TemplateGroup(head)
        group.add(entry, pieces.slice(1))
        groups.set(head, group)
      }
    }
    this.#static = statics
    // The longest head first, so that a more specific prefix is tried before a shorter one.
    this.#groups = [...groups.values()].sort((a, b) => b.head.length - a.head.length)
    this.#entries = Object.freeze(entries)
  }

  /** Every path the server answers, in table order. */
  get entries(): readonly PathEntry[] {
    return this.#entries
  }

  /** The routes of `path` (raw, without the query string), or `undefined` for an unknown path. */
  match(path: string): RouteMatch | undefined {
    const found = this.#static.get(path)
    if (found !== undefined) return found
    const groups = this.#groups
    for (let g = 0; g < groups.length; g++) {
      const group = groups[g]!
      if (!path.startsWith(group.head)) continue
      const match = group.match(path)
      if (match !== undefined) return match
    }
    return undefined
  }
}

/**
 * The routes of one path with HEAD answered by the GET route, listed right after it (D28: same
 * status, headers, scope and limit class; the transport leaves the body out).
 */
function withHead(declared: Record<string, Route>): Record<string, Route> {
  const get = declared['GET']
  if (get === undefined) return declared
  const methods = Object.create(null) as Record<string, Route>
  for (const method in declared) {
    methods[method] = declared[method]!
    if (method === 'GET') methods['HEAD'] = get
  }
  return methods
}

/** The templates that start with the same literal text, up to their first parameter. */
class TemplateGroup {
  readonly head: string
  /** Templates with one parameter, by the length of the text after it (a short list each). */
  readonly #bySuffixLength: { readonly suffix: string; readonly entry: PathEntry }[][] = []
  /** Templates with more: the literal text after each parameter, the last possibly empty. */
  readonly #others: { readonly tails: readonly string[]; readonly entry: PathEntry }[] = []

  constructor(head: string) {
    this.head = head
  }

  add(entry: PathEntry, tails: readonly string[]): void {
    const suffix = tails[0]!
    if (tails.length > 1) this.#others.push({ tails, entry })
    else (this.#bySuffixLength[suffix.length] ??= []).push({ suffix, entry })
  }

  /** Matches `path`, known to start with the head. */
  match(path: string): RouteMatch | undefined {
    const start = this.head.length
    let end = path.indexOf('/', start)
    if (end === -1) end = path.length
    if (end === start) return undefined
    const candidates = this.#bySuffixLength[path.length - end]
    if (candidates !== undefined) {
      for (let i = 0; i < candidates.length; i++) {
        const { suffix, entry } = candidates[i]!
        // endsWith, as the lengths agree: measured cheaper than startsWith from a position.
        if (suffix.length === 0 || path.endsWith(suffix)) {
          return { entry, params: [path.slice(start, end)] }
        }
      }
    }
    for (const { tails, entry } of this.#others) {
      const params = matchTails(path, tails, start, end)
      if (params !== undefined) return { entry, params }
    }
    return undefined
  }
}

/** The parameters of `path` for a template's tails, its first parameter being `start`–`end`. */
function matchTails(
  path: string,
  tails: readonly string[],
  start: number,
  end: number,
): string[] | undefined {
  const params = [path.slice(start, end)]
  let pos = end
  for (let i = 0; i < tails.length; i++) {
    const tail = tails[i]!
    if (!path.startsWith(tail, pos)) return undefined
    pos += tail.length
    if (i === tails.length - 1) break
    let next = path.indexOf('/', pos)
    if (next === -1) next = path.length
    if (next === pos) return undefined
    params.push(path.slice(pos, next))
    pos = next
  }
  return pos === path.length ? params : undefined
}

/**
 * The literal text around a template's parameters: `/v3/beneficiaries/{id}/status` is
 * `['/v3/beneficiaries/', '/status']`; a template without parameters is itself.
 */
function literalPieces(template: string): string[] {
  const pieces: string[] = []
  let literal = ''
  for (const segment of template.split('/').slice(1)) {
    if (segment.startsWith('{') && segment.endsWith('}')) {
      pieces.push(`${literal}/`)
      literal = ''
    } else if (segment.includes('{') || segment.includes('}')) {
      throw new TypeError(`a parameter must be a whole segment: ${template}`)
    } else {
      literal += `/${segment}`
    }
  }
  pieces.push(literal)
  return pieces
}

/** Whether `path` can prefix the API's paths: empty, or `/segment[/segment…]` without a trailing slash. */
export function isValidBasePath(path: string): boolean {
  if (path === '') return true
  if (!path.startsWith('/') || path.endsWith('/')) return false
  return path
    .slice(1)
    .split('/')
    .every((segment) => /^[A-Za-z0-9._~-]+$/.test(segment))
}
