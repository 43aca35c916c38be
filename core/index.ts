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
  ErrorCode,
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
  FieldChange,
  HistoryAction,
  HistoryEntry,
  Metadata,
  SortField,
} from './beneficiary.js'
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
  WriteOutcome,
} from './ports/beneficiary-store.js'
export type { ClientRecord, ClientStore } from './ports/client-store.js'
export type { RevokedToken, SessionRecord, SessionStore } from './ports/session-store.js'
export type { SigningKey, SigningKeyStore } from './ports/signing-key-store.js'
export type { BucketPolicy, RateLimitStore, TakeResult } from './ports/rate-limit-store.js'
export type { Storage } from './ports/storage.js'
export { FakeClock } from './fake-clock.js'
export { systemClock } from './system-clock.js'
export { LocalRateLimitStore, takeToken } from './token-bucket.js'
export type { BucketState } from './token-bucket.js'
export type { LimitClass, RateLimitOptions } from './rate-limiter.js'
export { searchTerms } from './search-terms.js'
export { canonicalJson } from './canonical-json.js'
