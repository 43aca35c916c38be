import { Compile } from 'typebox/compile'
import type { ApiResponse } from '../../server/api-response.js'
import { buildOpenApiDocument } from '../../server/openapi.js'
import type { Route } from '../../server/route.js'
import { RouteTable } from '../../server/route-table.js'
import { ROUTES } from '../../server/routes.js'
import { bodyText } from './body-text.js'

type Json = Record<string, unknown>

/**
 * Checks real responses against the OpenAPI document the server serves: the status must be
 * documented for the operation (or fall under `default`; a 405 under the shared
 * `MethodNotAllowed`), the body must match its schema, with every documented object closed (no
 * undocumented field may appear), an error's `code` must be its status and its `error` one the
 * response has an example of, every header the document says the response always carries must
 * be present, and no header the document describes may come where it is not listed.
 */
export class OpenApiResponseValidator {
  readonly #document: Json
  readonly #routes: RouteTable
  readonly #compiled = new Map<string, ReturnType<typeof Compile>>()
  /** Names of every header the document describes, lower-cased. */
  readonly #described: readonly string[]
  /** Every (method, template, status) checked so far. */
  readonly seen = new Set<string>()

  constructor(
    document: Json = buildOpenApiDocument() as Json,
    basePath = '/v3',
    routes: readonly Route[] = ROUTES,
  ) {
    this.#document = JSON.parse(JSON.stringify(document)) as Json
    this.#routes = new RouteTable(basePath, routes)
    const headers = (this.#document['components'] as Json)['headers'] as Json
    this.#described = Object.keys(headers).map((name) => name.toLowerCase())
  }

  /** Problems found with `response` to `method path`; empty when it conforms. */
  check(method: string, path: string, response: ApiResponse): string[] {
    const match = this.#routes.match(path)
    if (match === undefined) return response.status === 404 ? [] : [`no route for ${path}`]
    const template = match.entry.template
    const paths = this.#document['paths'] as Record<string, Record<string, Json>>
    let spec: Json
    let key: string
    if (match.entry.routes[method] === undefined) {
      if (response.status !== 405) return [`no ${method} on ${path}`]
      spec = this.resolve({ $ref: '#/components/responses/MethodNotAllowed' })!
      key = `${method} ${template} 405`
    } else {
      const operation = paths[template]?.[method.toLowerCase()]
      // The API reference page's own files are not part of the API it documents.
      if (operation === undefined) {
        return template.startsWith('/docs') ? [] : [`${method} ${template} is not in the document`]
      }
      const responses = operation['responses'] as Record<string, Json>
      const documented = responses[String(response.status)]
      const found = this.resolve(documented ?? responses['default'])
      if (found === undefined) return [`${method} ${template} does not document ${response.status}`]
      spec = found
      key = `${method} ${template} ${documented === undefined ? 'default' : response.status}`
    }
    this.seen.add(key)
    const where = `${method} ${template} ${response.status}`
    const problems = this.#headerProblems(spec, response).map((problem) => `${where}: ${problem}`)
    const content = spec['content'] as Record<string, Json> | undefined
    if (content === undefined) {
      // The handler answers HEAD like GET; the transport leaves the body out.
      if (response.body !== undefined && method !== 'HEAD')
        problems.push(`${where}: unexpected body`)
      return problems
    }
    if (method === 'HEAD') return problems
    if (response.body === undefined) return [...problems, `${where}: no body`]
    if (content['application/json'] === undefined) {
      // A text answer (the metrics): its media type must be the documented one.
      const sent = response.headers['content-type'] ?? ''
      const type = (media: string): string => media.split(';')[0]!.trim().toLowerCase()
      if (!Object.keys(content).some((media) => type(media) === type(sent))) {
        problems.push(`${where}: content-type ${sent}`)
      }
      return problems
    }
    const media = content['application/json']!
    const body: unknown = JSON.parse(bodyText(response)!)
    const validator = this.compile(media['schema'] as Json)
    if (!validator.Check(body)) {
      const errors = [...validator.Errors(body)].map((e) => `${e.instancePath} ${e.message}`)
      problems.push(`${where}: ${errors.join('; ')}`)
    }
    if (response.status >= 400) problems.push(...errorProblems(where, media, body, response.status))
    return problems
  }

  /** `value` with its `$ref` (to `#/components/…`) followed, if it is a reference. */
  resolve(value: Json | undefined): Json | undefined {
    const ref = value?.['$ref']
    if (typeof ref !== 'string') return value
    return ref
      .slice(2)
      .split('/')
      .reduce<unknown>((node, part) => (node as Json)[part], this.#document) as Json
  }

  /** A copy of `schema` with every `$ref` replaced by what it names. */
  inline(schema: unknown): unknown {
    if (Array.isArray(schema)) return schema.map((item) => this.inline(item))
    if (schema === null || typeof schema !== 'object') return schema
    if (typeof (schema as Json)['$ref'] === 'string')
      return this.inline(this.resolve(schema as Json))
    return Object.fromEntries(
      Object.entries(schema).map(([key, value]) => [key, this.inline(value)]),
    )
  }

  /** A validator of `schema`, its references inlined and its objects closed. */
  compile(schema: Json): ReturnType<typeof Compile> {
    const key = JSON.stringify(schema)
    let compiled = this.#compiled.get(key)
    if (compiled === undefined) {
      compiled = Compile(closeObjects(this.inline(schema)) as never)
      this.#compiled.set(key, compiled)
    }
    return compiled
  }

  #headerProblems(spec: Json, response: ApiResponse): string[] {
    const problems: string[] = []
    const listed = (spec['headers'] as Json | undefined) ?? {}
    for (const [name, use] of Object.entries(listed)) {
      const header = this.resolve(use as Json)!
      if (header['required'] === true && response.headers[name.toLowerCase()] === undefined) {
        problems.push(`header ${name} missing`)
      }
    }
    const names = Object.keys(listed).map((name) => name.toLowerCase())
    for (const name of Object.keys(response.headers)) {
      if (this.#described.includes(name) && !names.includes(name)) {
        problems.push(`header ${name} sent but not documented`)
      }
    }
    return problems
  }
}

/** An error body's `code` is its status, and its `error` one the response has an example of. */
function errorProblems(where: string, media: Json, body: unknown, status: number): string[] {
  const problems: string[] = []
  const { code, error } = body as { code?: unknown; error?: unknown }
  if (code !== status) problems.push(`${where}: code ${String(code)}`)
  const examples = Object.values((media['examples'] as Json | undefined) ?? {}) as Json[]
  const codes = examples.map((example) => (example['value'] as Json)['error'])
  if (!codes.includes(error)) problems.push(`${where}: error ${String(error)} has no example`)
  return problems
}

/** A copy of `schema` where every object schema with listed properties allows no others. */
function closeObjects(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closeObjects)
  if (schema === null || typeof schema !== 'object') return schema
  const copy: Json = {}
  for (const [key, value] of Object.entries(schema)) copy[key] = closeObjects(value)
  if ('properties' in copy && !('additionalProperties' in copy) && !('patternProperties' in copy)) {
    copy['additionalProperties'] = false
  }
  return copy
}
