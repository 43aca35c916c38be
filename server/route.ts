import type { TObject } from 'typebox'
import type {
  BeneficiaryService,
  QueryInput,
  RequestContext,
  Result,
  UnparsedBody,
} from '../core/beneficiary-service.js'
import { OPERATIONS, type OperationName, type OperationPolicy } from '../core/operations.js'
import type { Json, SchemaName } from './openapi-components.js'
import type { ErrorStatus } from './openapi-errors.js'

/** The methods the API uses. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE'

/**
 * The operations the server answers itself: no call to the service, no API token, no limit.
 * `metrics` is answered only when the server was given metrics (its route is left out else);
 * `docs` is the API reference page and its files; `index` is `GET /`, the links a person who
 * opens the server's address needs.
 */
export type ServerOperation = 'openapi' | 'health' | 'ready' | 'metrics' | 'docs' | 'index'

type ParamValues<Path extends string> = Path extends `${string}{${string}}${infer Rest}`
  ? [string, ...ParamValues<Rest>]
  : []

/**
 * The raw values of a path template's `{name}` segments, in order, as the router found them:
 * `[id]` for `/beneficiaries/{id}/status`.
 */
export type PathParams<Path extends string> = Readonly<ParamValues<Path>>

/** The raw values of any path's `{name}` segments, in order. */
export type RouteParams = readonly string[]

/**
 * How a route succeeds: its status and the schema of its body. A 201 also names the path of
 * what it created, relative to the base path, for the `Location` header.
 */
export type Success<T> =
  | { readonly status: 200; readonly response: SchemaName }
  | { readonly status: 201; readonly response: SchemaName; location(value: T): string }
  | { readonly status: 202; readonly response: SchemaName; location(value: T): string }
  | { readonly status: 204; readonly response?: undefined }

/** What every route states, whoever answers it. */
interface RouteFacts<Path extends string> {
  readonly method: HttpMethod
  /** OpenAPI path template: relative to the base path when `versioned`, else absolute. */
  readonly path: Path
  /** One line for the OpenAPI document. */
  readonly summary: string
  readonly tag: 'auth' | 'beneficiaries' | 'service'
  /**
   * The error statuses the operation answers beyond those its policy implies, which the
   * document adds itself: 400, 408, 413, 415 for a body; 400 for a query; 401 for a token; 403
   * for a scope; 412 for If-Match; 429 for a limit; 503 for a storage fault.
   */
  readonly errors: readonly ErrorStatus[]
}

/** What a route that calls the service states; its policy comes from the core's `OPERATIONS`. */
interface ServiceFacts<
  Path extends string,
  Params extends RouteParams,
  T,
> extends RouteFacts<Path> {
  readonly operation: OperationName
  /**
   * Calls the service. `query` is empty unless the route has a `query` schema. A method, whose
   * parameters are bivariant, so that a route typed for its own path fits the table's type.
   */
  invoke(
    service: BeneficiaryService,
    ctx: RequestContext,
    params: Params,
    body: UnparsedBody,
    query: QueryInput,
  ): Promise<Result<T>>
  /** The request body's schema, when the operation reads a body, and whether it must be sent. */
  readonly requestBody:
    { readonly schema: SchemaName | Json; readonly required: boolean } | undefined
  /** The query parameters the route reads; a route without them never parses the query string. */
  readonly query: TObject | undefined
  /** Whether a success carries the beneficiary's ETag (D23). */
  readonly etag: boolean
  /** Whether the route honours If-Match (D23). */
  readonly ifMatch: boolean
  /** Whether the route honours Idempotency-Key (D22) and may answer `Idempotent-Replayed`. */
  readonly idempotencyKey: boolean
  /** The media type of the success body, when it is not JSON (a stream of `response` items). */
  readonly mediaType?: string
  /**
   * The media types of a body the route takes as it is, not as JSON (a file to import): the
   * service is given `{ contentType, bytes }`; another media type is 415.
   */
  readonly uploads?: readonly string[]
}

/** What a route the server answers itself states. */
type ServerFacts<Path extends string> = RouteFacts<Path> & {
  readonly operation: ServerOperation
  /** Whether the path lives under the base path (`/v3`); the probes do not. */
  readonly versioned: boolean
  readonly status: 200
  /** The media type of the success body, when it is not JSON. */
  readonly mediaType?: string
  /** Describes every error answer of the route in place of the generic descriptions. */
  readonly errorDescription?: string
} & (
    | {
        /** In the OpenAPI document (the default), with the schema of its JSON body. */
        readonly documented?: true
        readonly response: SchemaName
      }
    | {
        /**
         * Left out of the OpenAPI document: the API reference page, its files and the index of
         * `/`, which are for people and not part of the API they describe (as FastAPI and
         * @fastify/swagger-ui leave theirs out).
         */
        readonly documented: false
        readonly response?: undefined
      }
  )

/** A route that calls one operation of the service. */
export type ServiceRoute = ServiceFacts<string, RouteParams, unknown> &
  Success<unknown> & {
    readonly kind: 'service'
    readonly versioned: true
    /** The core's policy of the operation: token, scope, limit class and key, body. */
    readonly policy: OperationPolicy
  }

/** A route the server answers itself; it has no policy in the core. */
export type ServerRoute = ServerFacts<string> & {
  readonly kind: 'server'
  readonly policy: undefined
}

/** One route of the API: every fact the router, the handler and the OpenAPI document read. */
export type Route = ServiceRoute | ServerRoute

/**
 * A route that calls the service, checked whole at compile time: a missing fact does not
 * compile. Its token, scope, limit class and key and whether it reads a body are the core's
 * policy of `operation` (`OPERATIONS`), read here, never restated.
 *
 * @example
 * defineRoute({
 *   method: 'GET', path: '/beneficiaries/{id}', operation: 'get', status: 200,
 *   response: 'BeneficiaryDetail', invoke: (service, ctx, [id]) => service.get(ctx, id), …
 * })
 */
export function defineRoute<const Path extends string, T>(
  facts: ServiceFacts<Path, PathParams<Path>, T> & Success<T>,
): ServiceRoute {
  return Object.freeze({
    ...facts,
    kind: 'service',
    versioned: true,
    policy: OPERATIONS[facts.operation],
  })
}

/** A route the server answers itself, checked whole at compile time. */
export function defineServerRoute<const Path extends string>(
  facts: ServerFacts<Path>,
): ServerRoute {
  return Object.freeze({ ...facts, kind: 'server', policy: undefined })
}

/**
 * Whether a route answers a GET (and its HEAD) with 304 Not Modified when `If-None-Match` names
 * its current ETag: every GET whose success carries an ETag.
 */
export function honoursIfNoneMatch(route: Route): boolean {
  return route.kind === 'service' && route.method === 'GET' && route.etag
}
