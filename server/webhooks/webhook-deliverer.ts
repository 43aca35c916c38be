import { randomUUID } from 'node:crypto'
import { changeEventOf } from '../../core/events.js'
import type {
  Clock,
  EventStore,
  WebhookEndpoint,
  WebhookState,
  WebhookStore,
} from '../../core/index.js'
import { webhookHeaders } from './webhook-signature.js'

/** How long a receiver has to answer 2xx (D34). */
export const DELIVERY_TIMEOUT_MS = 10_000
/** How long endpoints may fail before they are disabled (D34). */
export const DISABLE_AFTER_MS = 24 * 3600_000
/** The first retry's delay; each later one doubles, up to `MAX_BACKOFF_MS`. */
const FIRST_BACKOFF_MS = 5_000
const MAX_BACKOFF_MS = 3600_000
/** How long an instance keeps an endpoint after it took it, unless it renews. */
const LEASE_MS = 60_000
/** Events read from the feed at a time, per endpoint. */
const BATCH = 50

/** What a delivery attempt came to, for metrics. */
export type DeliveryOutcome = 'delivered' | 'failed' | 'disabled'

export interface WebhookDelivererOptions {
  readonly webhooks: WebhookStore
  readonly events: EventStore
  readonly clock: Clock
  /** Default `DELIVERY_TIMEOUT_MS`. */
  readonly timeoutMs?: number
  /** Told of every attempt: metrics. */
  readonly onAttempt?: (outcome: DeliveryOutcome) => void
  /** Told when an endpoint is disabled: a log line (the URL may hold a token: only the id). */
  readonly onDisabled?: (endpointId: string) => void
  /** Random in [0, 1), for the jitter; `Math.random` unless given. */
  readonly random?: () => number
}

/**
 * Delivers the change feed's events to the registered endpoints (D34): each endpoint follows the
 * feed from its own cursor, so it receives its events in the feed's order, each until it
 * answers 2xx within the timeout (at least once: a crash between a delivery and the saved
 * cursor sends it again, under the same `webhook-id`). A failure is retried with exponential
 * back-off and full jitter; after a day of failures the endpoint is disabled. An instance works
 * on an endpoint only while it holds the endpoint's lease, so with several instances each
 * delivery is attempted by one of them at a time.
 */
export class WebhookDeliverer {
  readonly #options: WebhookDelivererOptions
  readonly #owner = randomUUID()
  readonly #timeoutMs: number
  readonly #random: () => number
  #round: Promise<void> | undefined

  constructor(options: WebhookDelivererOptions) {
    this.#options = options
    this.#timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS
    this.#random = options.random ?? Math.random
  }

  /**
   * One round: every enabled, due endpoint whose lease this instance gets. A round asked for
   * while one runs waits for it and does nothing more: one instance, one round at a time.
   */
  round(): Promise<void> {
    this.#round ??= this.#roundOnce().finally(() => {
      this.#round = undefined
    })
    return this.#round
  }

  async #roundOnce(): Promise<void> {
    const { webhooks, clock } = this.#options
    for (const listed of await webhooks.list()) {
      const now = clock.now()
      if (listed.state.disabledAt !== null || listed.state.nextAttemptAt > now) continue
      if (!(await webhooks.lease(listed.id, this.#owner, now, now + LEASE_MS))) continue
      // Read again under the lease: another instance may have moved it since the list.
      const endpoint = (await webhooks.list()).find((candidate) => candidate.id === listed.id)
      if (endpoint === undefined || endpoint.state.disabledAt !== null) continue
      if (endpoint.state.nextAttemptAt > now) continue
      await this.#deliver(endpoint)
    }
  }

  /**
   * Delivers the endpoint's events from its cursor, a page at a time, until the feed has no more
   * or a delivery fails or the lease runs short: an endpoint that fell behind catches up at the
   * pace its receiver answers, not a page a round.
   */
  async #deliver(endpoint: WebhookEndpoint): Promise<void> {
    const leaseEnds = this.#options.clock.now() + LEASE_MS / 2
    let state = endpoint.state
    for (;;) {
      const next = await this.#deliverPage(endpoint, state, leaseEnds)
      if (next === undefined) return
      state = next
    }
  }

  /** One page of the feed: the state to go on from, or `undefined` when there is nothing more now. */
  async #deliverPage(
    endpoint: WebhookEndpoint,
    from: WebhookState,
    leaseEnds: number,
  ): Promise<WebhookState | undefined> {
    const { events, webhooks, clock } = this.#options
    let state = from
    const page = await events.read(state.cursor, BATCH)
    if (typeof page !== 'object') {
      // The cursor fell out of the retention: go on from the end, and say so in the state.
      state = { ...state, cursor: await events.end(), lastError: `cursor ${page}` }
      await webhooks.save(endpoint.id, this.#owner, state)
      return undefined
    }
    for (const stored of page.events) {
      // Within the lease, with room for one more attempt: the next round takes it up again.
      if (clock.now() > leaseEnds) return undefined
      const event = changeEventOf(stored)
      if (endpoint.types.includes(event.type)) {
        const failure = await this.#post(endpoint, event.id, JSON.stringify(event))
        const now = clock.now()
        if (failure !== undefined) {
          state = this.#failed(endpoint, state, failure, now)
          await webhooks.save(endpoint.id, this.#owner, state)
          return undefined
        }
        this.#options.onAttempt?.('delivered')
        state = {
          ...state,
          attempts: 0,
          failingSince: null,
          lastError: null,
          delivered: state.delivered + 1,
        }
      }
      state = { ...state, cursor: stored.position }
      // Saved after each delivery: a crash resends at most the one in flight.
      if (!(await webhooks.save(endpoint.id, this.#owner, state))) return undefined
    }
    if (page.events.length === 0 && page.next !== state.cursor) {
      await webhooks.save(endpoint.id, this.#owner, { ...state, cursor: page.next })
    }
    return page.events.length < BATCH ? undefined : state
  }

  #failed(
    endpoint: WebhookEndpoint,
    state: WebhookState,
    failure: string,
    now: number,
  ): WebhookState {
    const failingSince = state.failingSince ?? now
    const attempts = state.attempts + 1
    if (now - failingSince >= DISABLE_AFTER_MS) {
      this.#options.onAttempt?.('disabled')
      this.#options.onDisabled?.(endpoint.id)
      return {
        ...state,
        attempts,
        failingSince,
        failed: state.failed + 1,
        lastError: failure,
        disabledAt: now,
      }
    }
    this.#options.onAttempt?.('failed')
    const ceiling = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** Math.min(attempts - 1, 30))
    // Full jitter between half and all of the ceiling: retries of many endpoints spread out.
    const delay = Math.round(ceiling / 2 + (this.#random() * ceiling) / 2)
    return {
      ...state,
      attempts,
      failingSince,
      failed: state.failed + 1,
      lastError: failure,
      nextAttemptAt: now + delay,
    }
  }

  /** POSTs the event; `undefined` on a 2xx, else what went wrong (no body, no URL). */
  async #post(endpoint: WebhookEndpoint, id: string, body: string): Promise<string | undefined> {
    const timestamp = Math.floor(this.#options.clock.now() / 1000)
    try {
      const response = await fetch(endpoint.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'beneficiary-service-webhooks',
          ...webhookHeaders(endpoint.secret, id, timestamp, body),
        },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(this.#timeoutMs),
      })
      await response.body?.cancel()
      return response.status >= 200 && response.status < 300
        ? undefined
        : `status ${response.status}`
    } catch (error) {
      const name = (error as { name?: unknown }).name
      return name === 'TimeoutError' ? 'timeout' : 'connection failed'
    }
  }
}

/** Runs `deliverer.round()` every `intervalMs` until `stop()`; a failed round is reported. */
export class WebhookLoop {
  readonly #deliverer: WebhookDeliverer
  readonly #onError: (error: unknown) => void
  #timer: ReturnType<typeof setTimeout> | undefined
  #running: Promise<void> | undefined
  #stopped = false

  constructor(deliverer: WebhookDeliverer, onError: (error: unknown) => void) {
    this.#deliverer = deliverer
    this.#onError = onError
  }

  start(intervalMs = 1000): void {
    const tick = (): void => {
      this.#running = this.#deliverer
        .round()
        .catch((error: unknown) => this.#onError(error))
        .finally(() => {
          this.#running = undefined
          if (!this.#stopped) this.#timer = setTimeout(tick, intervalMs)
        })
    }
    tick()
  }

  async stop(): Promise<void> {
    this.#stopped = true
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    await this.#running
  }
}
