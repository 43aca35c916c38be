/** What a route does: one method of `BeneficiaryService`, or one of the server's own answers. */
export type Operation =
  | 'login'
  | 'refresh'
  | 'logout'
  | 'list'
  | 'create'
  | 'get'
  | 'update'
  | 'remove'
  | 'setStatus'
  | 'history'
  | 'openapi'
  | 'health'
  | 'ready'

/** The methods the API uses. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE'

/** One route of the API. */
export interface RouteDefinition {
  readonly method: HttpMethod
  /** OpenAPI path template, relative to the base path when `versioned`, else absolute. */
  readonly path: string
  readonly operation: Operation
  /** Whether the path lives under the base path (`/v3`); the probes do not. */
  readonly versioned: boolean
}

/**
 * Every route the server answers, in the order the OpenAPI document lists them. The matcher and
 * the document are both built from this table, so they cannot disagree.
 */
export const ROUTES: readonly RouteDefinition[] = Object.freeze([
  { method: 'POST', path: '/auth/login', operation: 'login', versioned: true },
  { method: 'POST', path: '/auth/refresh', operation: 'refresh', versioned: true },
  { method: 'POST', path: '/auth/logout', operation: 'logout', versioned: true },
  { method: 'GET', path: '/beneficiaries', operation: 'list', versioned: true },
  { method: 'POST', path: '/beneficiaries', operation: 'create', versioned: true },
  { method: 'GET', path: '/beneficiaries/{id}', operation: 'get', versioned: true },
  { method: 'PUT', path: '/beneficiaries/{id}', operation: 'update', versioned: true },
  { method: 'DELETE', path: '/beneficiaries/{id}', operation: 'remove', versioned: true },
  { method: 'POST', path: '/beneficiaries/{id}/status', operation: 'setStatus', versioned: true },
  { method: 'GET', path: '/beneficiaries/{id}/history', operation: 'history', versioned: true },
  { method: 'GET', path: '/openapi.json', operation: 'openapi', versioned: true },
  { method: 'GET', path: '/healthz', operation: 'health', versioned: false },
  { method: 'GET', path: '/readyz', operation: 'ready', versioned: false },
] as const)

/** All the routes of one path. */
export interface PathEntry {
  /** The full OpenAPI template, base path included: `/v3/beneficiaries/{id}`. */
  readonly template: string
  /** The pattern logged instead of the raw path: `/v3/beneficiaries/:id`. */
  readonly pattern: string
  /** Value of the `Allow` header of a 405 on this path. */
  readonly allow: string
  /** The operation of each method the path answers. */
  readonly operations: Readonly<Partial<Record<string, Operation>>>
}

/** A matched path, with the raw `{id}` segment when the path has one. */
export interface RouteMatch {
  readonly entry: PathEntry
  readonly id: string | undefined
}

const ITEM_PREFIX = '/beneficiaries/'

/**
 * Finds the routes of a path with a few string comparisons (no regular expression per request).
 *
 * @example
 * const table = new RouteTable('/v3')
 * table.match('/v3/beneficiaries/42/status') // { entry: { pattern: '/v3/beneficiaries/:id/status', … }, id: '42' }
 */
export class RouteTable {
  readonly basePath: string
  readonly #static: ReadonlyMap<string, RouteMatch>
  readonly #item: PathEntry
  readonly #status: PathEntry
  readonly #history: PathEntry
  readonly #entries: readonly PathEntry[]

  /** @throws TypeError when `basePath` is not empty or `/segment[/segment…]` without a trailing slash. */
  constructor(basePath: string) {
    if (!isValidBasePath(basePath)) {
      throw new TypeError(
        `basePath must be empty or look like /v3 (got ${JSON.stringify(basePath)})`,
      )
    }
    this.basePath = basePath
    const byPath = new Map<string, { template: string; operations: Record<string, Operation> }>()
    for (const route of ROUTES) {
      const template = route.versioned ? basePath + route.path : route.path
      // No prototype: a method such as `constructor` must not find anything.
      const operations = Object.create(null) as Record<string, Operation>
      const entry = byPath.get(template) ?? { template, operations }
      entry.operations[route.method] = route.operation
      byPath.set(template, entry)
    }
    const entries = [...byPath.values()].map(({ template, operations }): PathEntry =>
      Object.freeze({
        template,
        pattern: template.replaceAll('{id}', ':id'),
        allow: Object.keys(operations).join(', '),
        operations: Object.freeze(operations),
      }),
    )
    const find = (template: string): PathEntry => entries.find((e) => e.template === template)!
    const statics = new Map<string, RouteMatch>()
    for (const entry of entries) {
      if (!entry.template.includes('{'))
        statics.set(entry.template, Object.freeze({ entry, id: undefined }))
    }
    this.#static = statics
    this.#item = find(`${basePath}/beneficiaries/{id}`)
    this.#status = find(`${basePath}/beneficiaries/{id}/status`)
    this.#history = find(`${basePath}/beneficiaries/{id}/history`)
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
    const base = this.basePath.length
    if (!path.startsWith(ITEM_PREFIX, base) || !path.startsWith(this.basePath)) return undefined
    const idStart = base + ITEM_PREFIX.length
    const slash = path.indexOf('/', idStart)
    if (slash === idStart) return undefined
    if (slash === -1) {
      return idStart === path.length ? undefined : { entry: this.#item, id: path.slice(idStart) }
    }
    const rest = path.length - slash
    if (rest === 7 && path.endsWith('/status')) {
      return { entry: this.#status, id: path.slice(idStart, slash) }
    }
    if (rest === 8 && path.endsWith('/history')) {
      return { entry: this.#history, id: path.slice(idStart, slash) }
    }
    return undefined
  }
}

function isValidBasePath(path: string): boolean {
  if (path === '') return true
  if (!path.startsWith('/') || path.endsWith('/')) return false
  return path
    .slice(1)
    .split('/')
    .every((segment) => /^[A-Za-z0-9._~-]+$/.test(segment))
}
