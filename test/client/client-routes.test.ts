import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Static, TObject } from 'typebox'
import {
  CLIENT_ROUTES,
  type ApiErrorBody,
  type ApiErrorCode,
  type ClientOperation,
  type ClientRoute,
  type Queries,
  type RequestBodies,
  type ResponseBodies,
  type ResponseOf,
} from '../../client/index.js'
import type { BeneficiaryDetail } from '../../core/index.js'
import { HistoryQueryParams, ListQueryParams } from '../../core/validation/index.js'
import type { WireErrorCode } from '../../server/error-status.js'
import { buildOpenApiDocument } from '../../server/openapi.js'
import type { SCHEMAS } from '../../server/openapi-components.js'
import { ROUTES } from '../../server/routes.js'
import { EventsQueryParams } from '../../core/events.js'
import { ExportQueryParams } from '../../server/bulk/export-route.js'
import { ImportQueryParams } from '../../server/bulk/import-routes.js'

// The client's route table and types are its own copy of the server's facts (importing the
// server would load it into every host that wants a client). This file holds the copy to the
// original: a route, a field or an error identifier added to the server and not to the client
// fails here, at run time or at compile time.

/** `T` with every `readonly` removed, deeply: the core's shapes are read-only, Static<> is not. */
type Mutable<T> = T extends readonly (infer Item)[]
  ? Mutable<Item>[]
  : T extends object
    ? { -readonly [K in keyof T]: Mutable<T[K]> }
    : T

/** True when `A` and `B` accept exactly the same values. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false

/** The document's schemas that the server writes itself, as JSON, not taken from the core. */
type ServerMade =
  | 'ProbeStatus'
  | 'ReadyStatus'
  | 'OpenApiDocument'
  | 'MetricsText'
  | 'ImportFile'
  | 'ImportJob'
  | 'ImportJobReport'
type Schemas = Omit<typeof SCHEMAS, ServerMade>
/** Schemas the document shares as parts of others: the client names the wholes. */
type Parts =
  | 'BeneficiaryListItem'
  | 'BeneficiaryStatus'
  | 'Address'
  | 'Metadata'
  | 'HistoryEntry'
  | 'PageMeta'
  | 'PageLinks'
  | 'AccessLogEntry'
  | 'ChangeEvent'
  | 'BeneficiaryMatch'
  | 'MatchReason'
/** The error body and its parts, which the client types as `ApiErrorBody`. */
type ErrorParts = 'ErrorBody' | 'ErrorCode' | 'FieldProblem'
type Named = keyof RequestBodies | keyof ResponseBodies
/** The schemas the client names that the document takes from the core (the rest are the server's). */
type CoreNamed = Extract<Named, keyof Schemas>

/** For every schema both name: does the client's type accept what the schema accepts, and only that? */
type Agreement = {
  [N in CoreNamed]: Same<
    Mutable<
      N extends keyof RequestBodies ? RequestBodies[N] : ResponseBodies[N & keyof ResponseBodies]
    >,
    Mutable<Static<Schemas[N]>>
  >
}
const agreement: Agreement = {
  LoginBody: true,
  RefreshBody: true,
  LogoutBody: true,
  CreateBeneficiaryBody: true,
  UpdateBeneficiaryBody: true,
  StatusBody: true,
  TokenResponse: true,
  RefreshResponse: true,
  BeneficiaryCreated: true,
  BeneficiaryDetail: true,
  PagedBeneficiaries: true,
  PagedHistory: true,
  PagedAccessLog: true,
  BeneficiaryExport: true,
  ChangeEventPage: true,
  MatchCandidateBody: true,
  MatchList: true,
}
// Every core schema of the document the client could need is one it names, save the error body
// and the parts of other schemas.
const everySchemaNamed: Same<Exclude<keyof Schemas, ErrorParts | Parts>, CoreNamed> = true
const errorCodes: Same<ApiErrorCode, WireErrorCode> = true
const errorBody: Same<
  Mutable<Omit<ApiErrorBody, 'error'>>,
  Mutable<Omit<Static<Schemas['ErrorBody']>, 'error'>>
> = true
const queries: Same<
  { [N in keyof Queries]: keyof Queries[N] },
  {
    ListQueryParams: keyof Static<typeof ListQueryParams>
    HistoryQueryParams: 'page' | 'per_page'
    EventsQueryParams: 'after' | 'limit' | 'wait'
    ExportQueryParams: keyof Static<typeof ExportQueryParams>
    ImportQueryParams: keyof Static<typeof ImportQueryParams>
  }
> = true
const derived: Same<ResponseOf<'get'>, BeneficiaryDetail> = true

const QUERY_SCHEMAS: Readonly<Record<keyof Queries, TObject>> = {
  ListQueryParams,
  HistoryQueryParams,
  EventsQueryParams,
  ExportQueryParams,
  ImportQueryParams,
}

function clientRoute(operation: string): ClientRoute {
  assert.ok(Object.hasOwn(CLIENT_ROUTES, operation), `the client has no operation ${operation}`)
  return CLIENT_ROUTES[operation as ClientOperation]
}

/**
 * Routes of the table the client does not call: the operator's metrics scrape (Prometheus text,
 * read by a scraper, not by an API client), the API reference page and the index of `/` (for
 * people).
 */
const NOT_CALLED = new Set(['metrics', 'docs', 'index'])
const CALLED = ROUTES.filter((route) => !NOT_CALLED.has(route.operation))

describe('the client against the server it calls (drift)', () => {
  it('its types are the schemas the server validates and documents', () => {
    assert.ok(Object.values(agreement).every((same) => same))
    assert.deepEqual(
      [everySchemaNamed, errorCodes, errorBody, queries, derived],
      [true, true, true, true, true],
    )
  })

  it('has every route of the route table, with the same facts, and no other', () => {
    for (const route of CALLED) {
      const mine = clientRoute(route.operation)
      const facts = `facts of ${route.operation}`
      assert.deepEqual(
        [mine.method, mine.path, mine.versioned, mine.status, mine.response],
        [route.method, route.path, route.versioned, route.status, route.response],
        facts,
      )
      const service = route.kind === 'service' ? route : undefined
      const body = service?.requestBody?.schema
      assert.ok(body === undefined || typeof body === 'string', `${route.operation}: a named body`)
      assert.equal(mine.body, body, facts)
      assert.equal(mine.authenticated, route.policy?.authenticated ?? false, facts)
      assert.equal(mine.etag, service?.etag ?? false, facts)
      assert.equal(mine.ifMatch, service?.ifMatch ?? false, facts)
      assert.equal(mine.idempotencyKey, service?.idempotencyKey ?? false, facts)
      const query = mine.query === undefined ? undefined : QUERY_SCHEMAS[mine.query]
      assert.equal(query, service?.query, facts)
    }
    assert.deepEqual(
      Object.keys(CLIENT_ROUTES).sort(),
      CALLED.map((route) => route.operation).sort(),
    )
  })

  it('retries on 429 and 503 only what may be sent twice', () => {
    for (const [operation, route] of Object.entries(CLIENT_ROUTES)) {
      const expected =
        route.method !== 'POST'
          ? ['always', 'never']
          : route.idempotencyKey
            ? ['with-idempotency-key']
            : ['never']
      assert.ok(expected.includes(route.retry), `${operation}: ${route.retry}`)
    }
  })

  it('calls every operation of the OpenAPI document where the document says', () => {
    const document = buildOpenApiDocument({ basePath: '/v3' })
    const seen: string[] = []
    for (const [path, item] of Object.entries(document.paths as Record<string, object>)) {
      for (const [method, value] of Object.entries(item)) {
        if (method === 'parameters' || method === 'head') continue
        if (NOT_CALLED.has((value as { operationId: string }).operationId)) continue
        const operation = value as {
          operationId: string
          parameters: { name: string; in: string }[]
          requestBody?: { content: Record<string, { schema: { $ref?: string } }> }
          responses: Record<string, { content?: Record<string, { schema: { $ref: string } }> }>
        }
        const mine = clientRoute(operation.operationId)
        seen.push(operation.operationId)
        assert.equal(method.toUpperCase(), mine.method, operation.operationId)
        assert.equal(path, (mine.versioned ? '/v3' : '') + mine.path, operation.operationId)
        const success = operation.responses[String(mine.status)]
        assert.ok(success !== undefined, `${operation.operationId} answers ${mine.status}`)
        // JSON, or a stream of items of the schema (an export's NDJSON).
        const response = Object.values(success.content ?? {})[0]?.schema.$ref
        assert.equal(response, mine.response && `#/components/schemas/${mine.response}`)
        // JSON, or a file sent as it is (an import's CSV or NDJSON).
        const body = Object.values(operation.requestBody?.content ?? {})[0]?.schema.$ref
        assert.equal(body, mine.body && `#/components/schemas/${mine.body}`)
        const named = (where: string) =>
          operation.parameters.filter((p) => p.in === where).map((p) => p.name)
        assert.equal(named('header').includes('If-Match'), mine.ifMatch)
        assert.equal(named('header').includes('Idempotency-Key'), mine.idempotencyKey)
        const query = mine.query === undefined ? {} : QUERY_SCHEMAS[mine.query].properties
        assert.deepEqual(named('query'), Object.keys(query as object))
      }
    }
    assert.deepEqual(seen.sort(), Object.keys(CLIENT_ROUTES).sort())
  })
})
