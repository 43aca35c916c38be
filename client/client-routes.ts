import type { Queries, RequestBodies, ResponseBodies } from './wire-types.js'

/** The wire facts of one operation, as the client needs them. */
export interface ClientRoute {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE'
  /** Path template: under the base address when `versioned`, else from the origin. */
  readonly path: string
  readonly versioned: boolean
  /** The success status. */
  readonly status: 200 | 201 | 202 | 204
  /** The request body's schema name, when the operation reads one. */
  readonly body: keyof RequestBodies | undefined
  /** The success body's schema name, when it has one. */
  readonly response: keyof ResponseBodies | undefined
  /** The query's schema name, when the operation reads one. */
  readonly query: keyof Queries | undefined
  /** Whether it needs an access token. */
  readonly authenticated: boolean
  /** Whether a success carries the beneficiary's ETag (D23). */
  readonly etag: boolean
  /** Whether it honours If-Match (D23). */
  readonly ifMatch: boolean
  /** Whether it honours Idempotency-Key (D22). */
  readonly idempotencyKey: boolean
  /**
   * When a 429 or 503 may be sent again after `Retry-After`: `always` for idempotent methods,
   * `with-idempotency-key` for a create that carries a key (the server replays instead of
   * creating twice), `never` for the other POSTs and the readiness probe.
   */
  readonly retry: 'always' | 'with-idempotency-key' | 'never'
}

/**
 * Every operation of the server, named by its OpenAPI `operationId`. The server's route table
 * cannot be imported here (it would load the server into a host that only wants a client), so
 * `test/client/client-routes.test.ts` compares this table with it and with the OpenAPI
 * document, fact by fact: a route added to the server and not here fails that test.
 */
export const CLIENT_ROUTES = Object.freeze({
  login: route({
    method: 'POST',
    path: '/auth/login',
    status: 200,
    body: 'LoginBody',
    response: 'TokenResponse',
    authenticated: false,
  }),
  refresh: route({
    method: 'POST',
    path: '/auth/refresh',
    status: 200,
    body: 'RefreshBody',
    response: 'RefreshResponse',
    authenticated: false,
  }),
  logout: route({
    method: 'POST',
    path: '/auth/logout',
    status: 204,
    body: 'LogoutBody',
    response: undefined,
  }),
  list: route({
    method: 'GET',
    path: '/beneficiaries',
    status: 200,
    body: undefined,
    response: 'PagedBeneficiaries',
    query: 'ListQueryParams',
  }),
  create: route({
    method: 'POST',
    path: '/beneficiaries',
    status: 201,
    body: 'CreateBeneficiaryBody',
    response: 'BeneficiaryCreated',
    etag: true,
    idempotencyKey: true,
    retry: 'with-idempotency-key',
  }),
  get: route({
    method: 'GET',
    path: '/beneficiaries/{id}',
    status: 200,
    body: undefined,
    response: 'BeneficiaryDetail',
    etag: true,
  }),
  update: route({
    method: 'PUT',
    path: '/beneficiaries/{id}',
    status: 200,
    body: 'UpdateBeneficiaryBody',
    response: 'BeneficiaryDetail',
    etag: true,
    ifMatch: true,
  }),
  remove: route({
    method: 'DELETE',
    path: '/beneficiaries/{id}',
    status: 204,
    body: undefined,
    response: undefined,
    ifMatch: true,
  }),
  setStatus: route({
    method: 'POST',
    path: '/beneficiaries/{id}/status',
    status: 200,
    body: 'StatusBody',
    response: 'BeneficiaryDetail',
    etag: true,
    ifMatch: true,
  }),
  history: route({
    method: 'GET',
    path: '/beneficiaries/{id}/history',
    status: 200,
    body: undefined,
    response: 'PagedHistory',
    query: 'HistoryQueryParams',
    etag: true,
  }),
  match: route({
    method: 'POST',
    path: '/beneficiaries/match',
    status: 200,
    body: 'MatchCandidateBody',
    response: 'MatchList',
  }),
  matches: route({
    method: 'GET',
    path: '/beneficiaries/{id}/matches',
    status: 200,
    body: undefined,
    response: 'MatchList',
  }),
  openapi: route({
    method: 'GET',
    path: '/openapi.json',
    status: 200,
    body: undefined,
    response: 'OpenApiDocument',
    authenticated: false,
  }),
  health: route({
    method: 'GET',
    path: '/healthz',
    versioned: false,
    status: 200,
    body: undefined,
    response: 'ProbeStatus',
    authenticated: false,
  }),
  accessLog: route({
    method: 'GET',
    path: '/beneficiaries/{id}/access-log',
    status: 200,
    body: undefined,
    response: 'PagedAccessLog',
    query: 'HistoryQueryParams',
  }),
  export: route({
    method: 'GET',
    path: '/beneficiaries/{id}/export',
    status: 200,
    body: undefined,
    response: 'BeneficiaryExport',
  }),
  // A readiness probe that waited for the database would not say whether it answers now.
  ready: route({
    method: 'GET',
    path: '/readyz',
    versioned: false,
    status: 200,
    body: undefined,
    response: 'ReadyStatus',
    authenticated: false,
    retry: 'never',
  }),
  events: route({
    method: 'GET',
    path: '/events',
    status: 200,
    body: undefined,
    response: 'ChangeEventPage',
    query: 'EventsQueryParams',
  }),
  exportRecords: route({
    method: 'GET',
    path: '/beneficiaries/export',
    status: 200,
    body: undefined,
    response: 'BeneficiaryDetail',
    query: 'ExportQueryParams',
  }),
  startImport: route({
    method: 'POST',
    path: '/imports',
    status: 202,
    body: 'ImportFile',
    response: 'ImportJob',
    query: 'ImportQueryParams',
  }),
  getImport: route({
    method: 'GET',
    path: '/imports/{id}',
    status: 200,
    body: undefined,
    response: 'ImportJobReport',
    query: 'HistoryQueryParams',
  }),
})

/** The name of an operation (its OpenAPI `operationId`). */
export type ClientOperation = keyof typeof CLIENT_ROUTES

/** The request body type of `operation`. */
export type BodyOf<Operation extends ClientOperation> =
  (typeof CLIENT_ROUTES)[Operation]['body'] extends infer Name extends keyof RequestBodies
    ? RequestBodies[Name]
    : never

/** The success body type of `operation`; `null` for a 204. */
export type ResponseOf<Operation extends ClientOperation> =
  (typeof CLIENT_ROUTES)[Operation]['response'] extends infer Name extends keyof ResponseBodies
    ? ResponseBodies[Name]
    : null

/** The query type of `operation`. */
export type QueryOf<Operation extends ClientOperation> =
  (typeof CLIENT_ROUTES)[Operation]['query'] extends infer Name extends keyof Queries
    ? Queries[Name]
    : never

/** What a route states; the rest has defaults. */
type RouteFacts = Pick<ClientRoute, 'method' | 'path' | 'status' | 'body' | 'response'> &
  Partial<ClientRoute>

/**
 * A route with the defaults filled in: versioned, authenticated, no query, no ETag, If-Match or
 * Idempotency-Key, and retried when its method is idempotent (anything but POST).
 */
function route<const Facts extends RouteFacts>(
  facts: Facts,
): ClientRoute &
  Pick<Facts, 'body' | 'response'> & {
    readonly query: Facts extends { readonly query: infer Query } ? Query : undefined
  } {
  const filled: ClientRoute = {
    versioned: true,
    query: undefined,
    authenticated: true,
    etag: false,
    ifMatch: false,
    idempotencyKey: false,
    retry: facts.method === 'POST' ? 'never' : 'always',
    ...facts,
  }
  return Object.freeze(filled) as ClientRoute &
    Pick<Facts, 'body' | 'response'> & {
      readonly query: Facts extends { readonly query: infer Query } ? Query : undefined
    }
}
