/** Where an endpoint's deliveries stand (D34). */
export interface WebhookState {
  /** The change-feed position after the last event handled (delivered, or not of its types). */
  readonly cursor: string
  /** Failed attempts at the event after `cursor`, since its last success. */
  readonly attempts: number
  /** Epoch ms before which no attempt is made (the back-off). */
  readonly nextAttemptAt: number
  /** Epoch ms of the first failure since the last success; `null` while deliveries succeed. */
  readonly failingSince: number | null
  /** Epoch ms the endpoint was disabled after a day of failures; `null` while enabled. */
  readonly disabledAt: number | null
  /** What the last failed attempt met (`status 500`, `timeout`, …), never a body. */
  readonly lastError: string | null
  /** Deliveries that succeeded, and attempts that failed, since the endpoint was added. */
  readonly delivered: number
  readonly failed: number
}

/** The state of a new endpoint: it starts at `cursor`, with no attempt, failure or delivery. */
export function newEndpointState(cursor: string): WebhookState {
  return {
    cursor,
    attempts: 0,
    nextAttemptAt: 0,
    failingSince: null,
    disabledAt: null,
    lastError: null,
    delivered: 0,
    failed: 0,
  }
}

/** An endpoint an operator registered (D34). */
export interface WebhookEndpoint {
  readonly id: string
  readonly url: string
  /** The signing secret, `whsec_` and base64 (Standard Webhooks). */
  readonly secret: string
  /** The event types sent to it (`beneficiary.created`, …). */
  readonly types: readonly string[]
  readonly createdAt: number
  readonly state: WebhookState
}

/**
 * Webhook endpoints and their delivery state (D34). An instance delivers to an endpoint only
 * while it holds the endpoint's lease, which `lease` grants to one owner at a time (until it
 * expires), so that with several instances each delivery is attempted by one of them.
 */
export interface WebhookStore {
  add(endpoint: WebhookEndpoint): Promise<void>
  /** Every endpoint, oldest first. */
  list(): Promise<readonly WebhookEndpoint[]>
  /** Whether there was such an endpoint. */
  remove(id: string): Promise<boolean>
  /**
   * Grants `owner` the lease of endpoint `id` until `until` when nobody else holds it at `now`
   * (or `owner` does already); whether it did.
   */
  lease(id: string, owner: string, now: number, until: number): Promise<boolean>
  /** Saves the endpoint's state, only while `owner` holds its lease; whether it did. */
  save(id: string, owner: string, state: WebhookState): Promise<boolean>
}
