/**
 * The beneficiary service's core: every operation of the /v3 API as a method of a framework-free
 * service (`createBeneficiaryService`), client administration on its own (`createClientAdmin`),
 * the domain errors, the beneficiary's types, and the ports a storage adapter or a rate-limit
 * store implements. No Node.js built-ins and no driver: host applications, adapters and the HTTP
 * server all build on this.
 *
 * @example
 * import { createBeneficiaryService, FakeClock } from 'beneficiary-service'
 * import { MemoryStorage } from 'beneficiary-service/memory'
 *
 * const service = await createBeneficiaryService({ storage: new MemoryStorage(), clock: new FakeClock() })
 */
export { createBeneficiaryService } from './create-beneficiary-service.js'
export type { AccessTokenKey, BeneficiaryServiceOptions } from './create-beneficiary-service.js'
export { createClientAdmin } from './client-admin.js'
export type { ClientAdminOptions } from './client-admin.js'
export type {
  BeneficiaryService,
  ClientAdmin,
  QueryInput,
  RequestBody,
  RequestContext,
  Result,
  UnparsedBody,
} from './beneficiary-service.js'
export {
  BadRequestError,
  ConflictError,
  DomainError,
  IdempotencyKeyReusedError,
  InsufficientScopeError,
  InvalidCredentialsError,
  InvalidTokenError,
  InvalidTransitionError,
  NotFoundError,
  PreconditionFailedError,
  RateLimitedError,
  StorageUnavailableError,
  TokenExpiredError,
  ValidationError,
  isDomainError,
} from './errors.js'
export type {
  AnyDomainError,
  DomainErrorOptions,
  ErrorCode,
  ErrorContext,
  FieldProblem,
  RateLimitStatus,
  StorageFailureReason,
} from './errors.js'
export { BENEFICIARY_STATUSES, WRITABLE_FIELDS } from './beneficiary.js'
export type {
  Address,
  BeneficiaryCreated,
  BeneficiaryDetail,
  BeneficiaryListItem,
  BeneficiaryFields,
  BeneficiaryRecord,
  BeneficiaryStatus,
  BeneficiarySummary,
  CreateBeneficiaryBody,
  FieldChange,
  HistoryAction,
  HistoryEntry,
  Metadata,
  SortField,
  UpdateBeneficiaryBody,
} from './beneficiary.js'
export type { LoginBody, LogoutBody, RefreshBody } from './validation/auth-schemas.js'
export type { StatusBody } from './validation/beneficiary-schemas.js'
export type { HistoryQueryInput, ListQueryInput, SortValue } from './validation/query-schemas.js'
export type {
  ClientInfo,
  HistoryItem,
  PageLinks,
  PageMeta,
  Paged,
  ProvisionedClient,
  RefreshResponse,
  TokenResponse,
} from './shapes.js'
export type { Clock } from './ports/clock.js'
export type {
  BeneficiaryStore,
  CreateOutcome,
  IdempotencyClaim,
  ListQuery,
  NewBeneficiary,
  Page,
  TokenIdentity,
  TokenRead,
  WriteOutcome,
} from './ports/beneficiary-store.js'
export type { ClientRecord, ClientStore } from './ports/client-store.js'
export type { RevokedToken, SessionRecord, SessionStore } from './ports/session-store.js'
export type { SigningKey, SigningKeyStore } from './ports/signing-key-store.js'
export {
  KEY_RELOAD_SECONDS,
  rotateSigningKey,
  signingKeyStates,
  type KeyWindow,
  type SigningKeyState,
} from './signing-keys.js'
export type { BucketPolicy, RateLimitStore, TakeResult } from './ports/rate-limit-store.js'
export type { Storage } from './ports/storage.js'
export { SerializedJson } from './json-bytes.js'
export { FakeClock } from './fake-clock.js'
export { systemClock } from './system-clock.js'
export { LocalRateLimitStore } from './token-bucket.js'
export { FallbackRateLimitStore } from './fallback-rate-limit-store.js'
export type { FallbackRateLimitStoreOptions } from './fallback-rate-limit-store.js'
export type { LimitClass, RateLimitOptions } from './rate-limiter.js'
export { nameSortKey, searchTerms } from './search-terms.js'
export { OPERATIONS } from './operations.js'
export type { OperationName, OperationPolicy } from './operations.js'
export type { Sha256 } from './crypto.js'
export { importWithPeers, MissingPeerDependencyError } from './missing-peer-dependency-error.js'
export type { PeerPackage } from './missing-peer-dependency-error.js'
export { BufferedAccessLog } from './buffered-access-log.js'
export type { AccessLogBuffering } from './buffered-access-log.js'
export { accessLogItemOf } from './access-log-operations.js'
export type { AccessLogItem, BeneficiaryExport } from './access-log-operations.js'
export { MAX_PURPOSE_LENGTH, purposeOf } from './access-recorder.js'
export type {
  AccessLogCursor,
  AccessLogEntry,
  AccessLogScan,
  AccessLogStats,
  AccessLogStore,
  AccessLogTable,
  AccessOperation,
  StoredAccessLogEntry,
} from './ports/access-log-store.js'
export { AccessLogRetention } from './access-log-retention.js'
export type { AccessLogRetentionOptions } from './access-log-retention.js'
export { CursorExpiredError } from './errors.js'
export { MAX_EVENTS_LIMIT, MAX_EVENTS_WAIT } from './events.js'
export type { ChangeEvent, ChangeEventPage, ChangeEventType, EventsQueryInput } from './events.js'
export type { EventPage, EventRead, EventStore, StoredEvent } from './ports/event-store.js'
export type { WebhookEndpoint, WebhookState, WebhookStore } from './ports/webhook-store.js'
export {
  DEFAULT_MATCH_RULES,
  MATCH_RULE_KINDS,
  MatchRulesError,
  parseMatchRules,
} from './matching/match-rules.js'
export type { MatchRule, MatchRuleKind, MatchRules } from './matching/match-rules.js'
export {
  emailMatchKey,
  nameMatchKey,
  phoneMatchKey,
  storedMatchKeys,
  swappedDate,
} from './matching/match-keys.js'
export type { StoredMatchKeys } from './matching/match-keys.js'
export { nameSimilarity, prepareCandidate, scoreMatch } from './matching/match-score.js'
export type {
  MatchCandidate,
  MatchReason,
  MatchScore,
  PreparedCandidate,
} from './matching/match-score.js'
export { MAX_MATCHES } from './matching/match-operations.js'
export type { BeneficiaryMatch, MatchList } from './matching/match-operations.js'
export type { MatchQuery, MatchStore } from './ports/match-store.js'
export type { MatchCandidateBody } from './beneficiary-service.js'
export type { BulkStore, SnapshotFilter } from './ports/bulk-store.js'
export type { ExportFormat, ExportQuery, RecordExport } from './bulk-operations.js'
export { exportPages, exportQueryOf, EXPORT_PAGE } from './bulk-operations.js'
export type {
  ImportJob,
  ImportJobCounts,
  ImportJobState,
  ImportJobStore,
  LeasedImportJob,
  NewImportJob,
  StoredOutcome,
} from './ports/import-job-store.js'
export type { ImportJobReport, ImportJobView, ImportUpload } from './bulk-operations.js'
export { MAX_IMPORT_ROWS } from './bulk-operations.js'
