export { parseCreateInput, parseUpdateInput } from './parse-beneficiary-input.js'
export type { BeneficiaryPatch } from './parse-beneficiary-input.js'
export { parseStatusInput } from './parse-status-input.js'
export type { StatusInput } from './parse-status-input.js'
export { parseLoginInput, parseRefreshInput } from './parse-auth-input.js'
export type { LoginInput, RefreshInput } from './parse-auth-input.js'
export { parseHistoryQuery, parseListQuery } from './parse-list-query.js'
export type { ListParams, PageParams } from './parse-list-query.js'
export { fiscalCodeBirthDateProblem, isFiscalCode } from './fiscal-code.js'
export { COUNTRY_CODES } from './country-codes.js'
export type { CountryCode } from './country-codes.js'
export {
  Address,
  DateOfBirth,
  Email,
  FISCAL_CODE_FORMAT,
  FiscalCode,
  Metadata,
  PersonName,
  Phone,
  RESERVED_KEYS,
  Status,
  StatusBody,
} from './beneficiary-schemas.js'
export {
  BeneficiaryCreated,
  BeneficiaryDetail,
  BeneficiaryListItem,
  CreateBeneficiaryBody,
  UpdateBeneficiaryBody,
} from '../beneficiary.js'
export { LoginBody, LogoutBody, RefreshBody } from './auth-schemas.js'
export {
  HistoryQueryParams,
  ListQueryParams,
  MAX_PAGE,
  SORT_FIELDS,
  SORT_VALUES,
} from './query-schemas.js'
export type { HistoryQueryInput, ListQueryInput, SortValue } from './query-schemas.js'
export {
  ErrorBody,
  FieldProblemSchema,
  HistoryItem,
  PageLinks,
  PageMeta,
  PagedBeneficiaries,
  PagedHistory,
  RefreshResponse,
  TokenResponse,
  pagedSchema,
} from './response-schemas.js'
