/**
 * A typed HTTP client of the beneficiary service's /v3 API, for Node.js 20 and browsers alike:
 * `fetch` and nothing else at run time. Importing it loads none of the service, its server, its
 * storage adapters or their drivers; its types are the service's own, derived from the same
 * TypeBox schemas that validate requests, and a test holds its routes to the server's.
 *
 * @example
 * import { BeneficiaryClient, isApiError } from 'beneficiary-service/client'
 *
 * const client = new BeneficiaryClient({
 *   baseUrl: 'https://beneficiaries.example.org/v3',
 *   credentials: { clientId: process.env.CLIENT_ID, clientSecret: process.env.CLIENT_SECRET },
 * })
 * for await (const beneficiary of client.listAll({ status: 'pending', per_page: 100 })) {
 *   console.log(beneficiary.id, beneficiary.last_name)
 * }
 */
export { BeneficiaryClient } from './beneficiary-client.js'
export type {
  ApiResult,
  BeneficiaryClientOptions,
  CallOptions,
  ClientCredentials,
  ClientEvent,
  ConditionalOptions,
  CreateOptions,
  FetchFunction,
  RateLimitInfo,
} from './client-options.js'
export { ApiError, isApiError, UnexpectedResponseError } from './api-error.js'
export { CLIENT_ROUTES } from './client-routes.js'
export type { BodyOf, ClientOperation, ClientRoute, QueryOf, ResponseOf } from './client-routes.js'
export { retryAfterMs } from './retry-after.js'
export type { TokenReason } from './token-keeper.js'
export type {
  ApiErrorBody,
  ApiErrorCode,
  HttpErrorCode,
  OpenApiDocument,
  ProbeStatus,
  Queries,
  ReadyStatus,
  RequestBodies,
  ResponseBodies,
} from './wire-types.js'
export type {
  Address,
  BeneficiaryCreated,
  BeneficiaryDetail,
  BeneficiaryListItem,
  BeneficiaryStatus,
  CreateBeneficiaryBody,
  FieldProblem,
  HistoryItem,
  HistoryQueryInput,
  ListQueryInput,
  Metadata,
  PageLinks,
  PageMeta,
  Paged,
  RefreshResponse,
  SortValue,
  StatusBody,
  TokenResponse,
  UpdateBeneficiaryBody,
} from '../core/index.js'
export type {
  ChangeEvent,
  ChangeEventPage,
  ChangeEventType,
  EventsQueryInput,
} from '../core/index.js'
export type {
  ExportQueryInput,
  ImportJob,
  ImportJobReport,
  ImportQueryInput,
  ImportRowOutcome,
} from './wire-types.js'
