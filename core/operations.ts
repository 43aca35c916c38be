import type { LimitClass } from './rate-limiter.js'

/** The operations of the service that a request can invoke: one method of `BeneficiaryService` each. */
export type OperationName =
  | 'login'
  | 'refresh'
  | 'logout'
  | 'list'
  | 'get'
  | 'create'
  | 'update'
  | 'remove'
  | 'setStatus'
  | 'history'
  | 'accessLog'
  | 'export'
  | 'events'
  | 'match'
  | 'matches'
  | 'exportRecords'
  | 'startImport'
  | 'getImport'

/**
 * A scope a token may hold (D2): `audit` (D37) reads who read a record and exports everything
 * held about a person, and is granted only to a client created with it.
 */
export type Scope = 'read' | 'write' | 'audit'

/** What the service requires of a request before it does an operation's work. */
export interface OperationPolicy {
  /** Whether the request must carry an access token (login and refresh carry credentials instead). */
  readonly authenticated: boolean
  /**
   * Every scope the token must hold; empty when any valid token will do. `write` for a change
   * (D2), and `read` too when the answer carries a record (D29: PUT and the status transition
   * answer with the detail shape). A token lacking one is refused with the first it lacks.
   */
  readonly scopes: readonly Scope[]
  /** The limit class the request draws one token from (D19). */
  readonly limitClass: LimitClass
  /**
   * What keys the request's bucket: the client's IP for the operations open to anyone (D21), so
   * a server resolves the address only for those; the authenticated client otherwise.
   */
  readonly limitKey: 'ip' | 'client'
  /** Whether the operation reads a request body. */
  readonly body: boolean
}

/**
 * Every operation's policy, the one place these facts live: the service admits requests by it,
 * and the HTTP server's route table, router and OpenAPI document read it.
 */
export const OPERATIONS: Readonly<Record<OperationName, OperationPolicy>> = Object.freeze({
  login: { authenticated: false, scopes: [], limitClass: 'auth', limitKey: 'ip', body: true },
  refresh: {
    authenticated: false,
    scopes: [],
    limitClass: 'auth',
    limitKey: 'ip',
    body: true,
  },
  logout: {
    authenticated: true,
    scopes: [],
    limitClass: 'standard',
    limitKey: 'client',
    body: true,
  },
  list: {
    authenticated: true,
    scopes: ['read'],
    limitClass: 'standard',
    limitKey: 'client',
    body: false,
  },
  get: {
    authenticated: true,
    scopes: ['read'],
    limitClass: 'standard',
    limitKey: 'client',
    body: false,
  },
  create: {
    authenticated: true,
    scopes: ['write'],
    limitClass: 'write',
    limitKey: 'client',
    body: true,
  },
  update: {
    authenticated: true,
    scopes: ['write', 'read'],
    limitClass: 'write',
    limitKey: 'client',
    body: true,
  },
  remove: {
    authenticated: true,
    scopes: ['write'],
    limitClass: 'write',
    limitKey: 'client',
    body: false,
  },
  setStatus: {
    authenticated: true,
    scopes: ['write', 'read'],
    limitClass: 'write',
    limitKey: 'client',
    body: true,
  },
  history: {
    authenticated: true,
    scopes: ['read'],
    limitClass: 'standard',
    limitKey: 'client',
    body: false,
  },
  accessLog: {
    authenticated: true,
    scopes: ['audit'],
    limitClass: 'standard',
    limitKey: 'client',
    body: false,
  },
  export: {
    authenticated: true,
    scopes: ['audit'],
    limitClass: 'standard',
    limitKey: 'client',
    body: false,
  },
  events: {
    authenticated: true,
    scopes: ['read'],
    limitClass: 'standard',
    limitKey: 'client',
    body: false,
  },
  match: {
    authenticated: true,
    scopes: ['read'],
    limitClass: 'standard',
    limitKey: 'client',
    body: true,
  },
  matches: {
    authenticated: true,
    scopes: ['read'],
    limitClass: 'standard',
    limitKey: 'client',
    body: false,
  },
  exportRecords: {
    authenticated: true,
    scopes: ['read'],
    limitClass: 'bulk',
    limitKey: 'client',
    body: false,
  },
  startImport: {
    authenticated: true,
    scopes: ['write'],
    limitClass: 'bulk',
    limitKey: 'client',
    body: true,
  },
  getImport: {
    authenticated: true,
    scopes: ['read'],
    limitClass: 'standard',
    limitKey: 'client',
    body: false,
  },
})
