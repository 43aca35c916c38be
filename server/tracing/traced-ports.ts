import type { BeneficiaryStore } from '../../core/ports/beneficiary-store.js'
import type { ClientStore } from '../../core/ports/client-store.js'
import type { EventStore } from '../../core/ports/event-store.js'
import type { MatchStore } from '../../core/ports/match-store.js'
import type { RateLimitStore } from '../../core/ports/rate-limit-store.js'
import type { SessionStore } from '../../core/ports/session-store.js'
import type { SigningKeyStore } from '../../core/ports/signing-key-store.js'
import type { Storage } from '../../core/ports/storage.js'

/** Runs `call` inside a span named `name`; the call's arguments are never seen by the span. */
export type SpanAround = <R>(name: string, call: () => Promise<R>) => Promise<R>

// Every member of each port, so that a member added to a port fails to compile here until it
// is traced too.
const BENEFICIARY_STORE: Readonly<Record<keyof BeneficiaryStore, true>> = {
  get: true,
  getForToken: true,
  list: true,
  create: true,
  update: true,
  remove: true,
  history: true,
}
const CLIENT_STORE: Readonly<Record<keyof ClientStore, true>> = {
  insert: true,
  get: true,
  list: true,
  revoke: true,
}
const SESSION_STORE: Readonly<Record<keyof SessionStore, true>> = {
  insert: true,
  findByRefreshTokenHash: true,
  revoke: true,
  isTokenActive: true,
}
const SIGNING_KEY_STORE: Readonly<Record<keyof SigningKeyStore, true>> = {
  list: true,
  insert: true,
}
const RATE_LIMIT_STORE: Readonly<Record<keyof RateLimitStore, true>> = { take: true }
const EVENT_STORE: Readonly<Record<keyof EventStore, true>> = {
  read: true,
  purge: true,
  head: true,
  end: true,
}
const MATCH_STORE: Readonly<Record<keyof MatchStore, true>> = { candidates: true }

/**
 * `storage` with each call of its four ports inside a span named `port.method`. A new object
 * of plain functions, built once: no proxy stands between a call and the port. An optional
 * member the port lacks (`getForToken`) stays absent, so the core still sees what the adapter
 * offers.
 */
export function tracedStorage(storage: Storage, around: SpanAround): Storage {
  return {
    beneficiaries: tracedPort(storage.beneficiaries, 'beneficiaries', BENEFICIARY_STORE, around),
    clients: tracedPort(storage.clients, 'clients', CLIENT_STORE, around),
    sessions: tracedPort(storage.sessions, 'sessions', SESSION_STORE, around),
    signingKeys: tracedPort(storage.signingKeys, 'signing_keys', SIGNING_KEY_STORE, around),
    // Untraced: `record` only queues, and its batches are written off the request's path.
    ...(storage.accessLog !== undefined && { accessLog: storage.accessLog }),
    ...(storage.historyRetention !== undefined && { historyRetention: storage.historyRetention }),
    ...(storage.matches !== undefined && {
      matches: tracedPort(storage.matches, 'matches', MATCH_STORE, around),
    }),
    ping: () => storage.ping(),
    close: () => storage.close(),
    ...(storage.events !== undefined && {
      events: tracedPort(storage.events, 'events', EVENT_STORE, around),
    }),
    ...(storage.webhooks !== undefined && { webhooks: storage.webhooks }),
  }
}

/** `store` with each take inside a span named `rate_limits.take`. */
export function tracedRateLimitStore(store: RateLimitStore, around: SpanAround): RateLimitStore {
  return tracedPort(store, 'rate_limits', RATE_LIMIT_STORE, around)
}

function tracedPort<T extends object>(
  port: T,
  name: string,
  members: Readonly<Record<keyof T, true>>,
  around: SpanAround,
): T {
  const traced: Record<string, unknown> = {}
  for (const member of Object.keys(members)) {
    const call = (port as Record<string, unknown>)[member]
    if (typeof call !== 'function') continue
    const spanName = `${name}.${member}`
    traced[member] = (...args: unknown[]) =>
      around(spanName, () => call.apply(port, args) as Promise<unknown>)
  }
  return traced as T
}
