import { Compile } from 'typebox/compile'
import type { ApiResponse } from '../../server/api-response.js'
import { buildOpenApiDocument } from '../../server/openapi.js'
import type { Route } from '../../server/route.js'
import { RouteTable } from '../../server/route-table.js'
import { ROUTES } from '../../server/routes.js'

type Json = Record<string, unknown>

/**
 * Checks real responses against the OpenAPI document the server serves: the status must be
 * documented for the operation (or fall under `default`), the body must match its schema, with
 * every documented object closed (no undocumented field may appear), and every header the
 * document lists for that response must be present.
 */
export class OpenApiResponseValidator {
  readonly #document: Json
  readonly #routes: RouteTable
  readonly #compiled = new Map<string, ReturnType<typeof Compile>>()
  /** Every (method, template, status) checked so far. */
  readonly seen = new Set<string>()

  constructor(
    document: Json = buildOpenApiDocument() as Json,
    basePath = '/v3',
    routes: readonly Route[] = ROUTES,
  ) {
    this.#document = JSON.parse(JSON.stringify(document)) as Json
    this.#routes = new RouteTable(basePath, routes)
  }

  /** Problems found with `response` to `method path`; empty when it conforms. */
  check(method: string, path: string, response: ApiResponse): string[] {
    const match = this.#routes.match(path)
    if (match === undefined) return response.status === 404 ? [] : [`no route for ${path}`]
    if (match.entry.routes[method] === undefined)
      return response.status === 405 ? [] : [`no ${method} on ${path}`]
    const template = match.entry.template
    const paths = this.#document['paths'] as Record<string, Record<string, Json>>
    const operation = paths[template]?.[method.toLowerCase()]
    if (operation === undefined) return [`${method} ${template} is not in the document`]
    const responses = operation['responses'] as Record<string, Json>
    const documented = responses[String(response.status)]
    const spec = documented ?? responses['default']
    if (spec === undefined) return [`${method} ${template} does not document ${response.status}`]
    this.seen.add(`${method} ${template} ${documented === undefined ? 'default' : response.status}`)
    const problems: string[] = []
    for (const name of Object.keys((spec['headers'] as Json | undefined) ?? {})) {
      // Rate-limit headers appear once a request reached the limiter; the challenge not on bad logins.
      const optional = /^(RateLimit|X-RateLimit|Idempotent-Replayed|ETag|WWW-Authenticate)/.test(
        name,
      )
      if (!optional && response.headers[name.toLowerCase()] === undefined) {
        problems.push(`${method} ${template} ${response.status}: header ${name} missing`)
      }
    }
    const content = spec['content'] as Record<string, { schema: Json }> | undefined
    if (content === undefined) {
      // The handler answers HEAD like GET; the transport leaves the body out (D28).
      if (response.body !== undefined && method !== 'HEAD')
        problems.push(`${method} ${template} ${response.status}: unexpected body`)
      return problems
    }
    if (response.body === undefined)
      return [...problems, `${method} ${template} ${response.status}: no body`]
    if (content['application/json'] === undefined) {
      // A text answer (the metrics): its media type must be the documented one.
      const sent = response.headers['content-type'] ?? ''
      const type = (media: string): string => media.split(';')[0]!.trim().toLowerCase()
      if (!Object.keys(content).some((media) => type(media) === type(sent))) {
        problems.push(`${method} ${template} ${response.status}: content-type ${sent}`)
      }
      return problems
    }
    const ref = String(content['application/json']!.schema['$ref'])
    const validator = this.#validator(ref)
    const body: unknown = JSON.parse(response.body)
    if (!validator.Check(body)) {
      const errors = [...validator.Errors(body)].map((e) => `${e.instancePath} ${e.message}`)
      problems.push(`${method} ${template} ${response.status}: ${errors.join('; ')}`)
    }
    return problems
  }

  #validator(ref: string): ReturnType<typeof Compile> {
    let compiled = this.#compiled.get(ref)
    if (compiled === undefined) {
      const name = ref.replace('#/components/schemas/', '')
      const schemas = (this.#document['components'] as Json)['schemas'] as Record<string, Json>
      compiled = Compile(closeObjects(schemas[name]!) as never)
      this.#compiled.set(ref, compiled)
    }
    return compiled
  }
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
