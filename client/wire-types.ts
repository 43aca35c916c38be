import type {
  BeneficiaryCreated,
  BeneficiaryDetail,
  BeneficiaryListItem,
  CreateBeneficiaryBody,
  ErrorCode,
  FieldProblem,
  AccessLogItem,
  BeneficiaryExport,
  HistoryItem,
  HistoryQueryInput,
  ListQueryInput,
  LoginBody,
  LogoutBody,
  Paged,
  RefreshBody,
  RefreshResponse,
  StatusBody,
  TokenResponse,
  UpdateBeneficiaryBody,
  MatchCandidateBody,
  MatchList,
} from '../core/index.js'
import type { ChangeEventPage, EventsQueryInput } from '../core/index.js'

// Types only: this file compiles to nothing, so a host that imports the client loads no core,
// server or adapter code. Each name is the schema's name under `#/components/schemas` of the
// OpenAPI document, and each type the core's own, derived from that TypeBox schema;
// `test/client/client-routes.test.ts` checks both, so neither can drift.

/** The request body of each operation that takes one, by its schema's name. */
export interface RequestBodies {
  readonly LoginBody: LoginBody
  readonly RefreshBody: RefreshBody
  readonly LogoutBody: LogoutBody
  readonly CreateBeneficiaryBody: CreateBeneficiaryBody
  readonly UpdateBeneficiaryBody: UpdateBeneficiaryBody
  readonly StatusBody: StatusBody
  readonly MatchCandidateBody: MatchCandidateBody
  /** The file of an import (D39), sent as it is: CSV or NDJSON text. */
  readonly ImportFile: string | Uint8Array<ArrayBuffer>
}

/** `GET /healthz`: `ok`. */
export interface ProbeStatus {
  readonly status: string
}

/**
 * `GET /readyz`: `ready`, or `degraded` while a part named in `degraded` does not answer (the
 * shared rate-limit store: `rate_limits`) and the instance still serves.
 */
export interface ReadyStatus {
  readonly status: 'ready' | 'degraded'
  readonly degraded?: readonly string[]
}

/** The OpenAPI 3.1 document the server describes itself with. */
export interface OpenApiDocument {
  readonly openapi: string
  readonly paths: Readonly<Record<string, unknown>>
  readonly [key: string]: unknown
}

/** The success body of each operation that answers one, by its schema's name. */
export interface ResponseBodies {
  readonly TokenResponse: TokenResponse
  readonly RefreshResponse: RefreshResponse
  readonly BeneficiaryCreated: BeneficiaryCreated
  readonly BeneficiaryDetail: BeneficiaryDetail
  readonly PagedBeneficiaries: Paged<BeneficiaryListItem>
  readonly PagedHistory: Paged<HistoryItem>
  readonly ProbeStatus: ProbeStatus
  readonly ReadyStatus: ReadyStatus
  readonly OpenApiDocument: OpenApiDocument
  readonly PagedAccessLog: Paged<AccessLogItem>
  readonly BeneficiaryExport: BeneficiaryExport
  readonly ChangeEventPage: ChangeEventPage
  readonly MatchList: MatchList
  readonly ImportJob: ImportJob
  readonly ImportJobReport: ImportJobReport
}

/** The query of each operation that reads one, by its schema's name in the core. */
export interface Queries {
  readonly ListQueryParams: ListQueryInput
  readonly HistoryQueryParams: HistoryQueryInput
  readonly EventsQueryParams: EventsQueryInput
  readonly ExportQueryParams: ExportQueryInput
  readonly ImportQueryParams: ImportQueryInput
}

/** The query of `POST /imports` (D39). */
export interface ImportQueryInput {
  /** `true` drops the fields the service assigns from every row (to import an export). */
  readonly ignore_assigned?: 'true' | 'false'
}

/** An import job (D39). */
export interface ImportJob {
  readonly id: string
  readonly state: 'queued' | 'running' | 'done' | 'failed'
  readonly format: 'csv' | 'ndjson'
  readonly rows: number
  readonly created: number
  readonly existing: number
  readonly refused: number
  readonly error: string | null
  readonly created_at: string
  readonly updated_at: string
  readonly finished_at: string | null
}

/** One row's outcome in an import's report. */
export type ImportRowOutcome =
  | { readonly row: number; readonly outcome: 'created' | 'existing'; readonly id: number }
  | {
      readonly row: number
      readonly outcome: 'refused'
      readonly error: Omit<ApiErrorBody, 'request_id'>
    }

/** An import job with a page of its report. */
export interface ImportJobReport extends ImportJob {
  readonly report: Paged<ImportRowOutcome>
}

/** The query of an export (D39): the list's filters; the client reads NDJSON. */
export type ExportQueryInput = Pick<
  ListQueryInput,
  'status' | 'created_from' | 'created_to' | 'search'
> & { readonly format?: 'ndjson' }

/**
 * Error identifiers that only the HTTP layer produces, beside the core's (D12, D24). A new one
 * in the server fails `test/client/client-routes.test.ts` until it is listed here.
 */
export type HttpErrorCode =
  | 'method_not_allowed'
  | 'request_timeout'
  | 'payload_too_large'
  | 'request_header_fields_too_large'
  | 'unsupported_media_type'
  | 'internal_error'

/** Every `error` identifier the server's standard error body can carry. */
export type ApiErrorCode = ErrorCode | HttpErrorCode

/**
 * The standard error body (specification 7.1), with the added `request_id` (D24); `details`
 * comes with `validation_failed`, `retry_after` with `rate_limit_exceeded`.
 */
export interface ApiErrorBody {
  readonly error: ApiErrorCode
  readonly message: string
  /** The HTTP status. */
  readonly code: number
  readonly details?: readonly FieldProblem[]
  readonly request_id?: string
  /** Whole seconds until a request is allowed again (429 only). */
  readonly retry_after?: number
}
