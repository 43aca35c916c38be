import type { RequestContext } from './beneficiary-service.js'
import { randomToken } from './crypto.js'
import { ValidationError } from './errors.js'
import type { OperationName } from './operations.js'
import type { AccessLogStore, AccessOperation } from './ports/access-log-store.js'
import type { Clock } from './ports/clock.js'

/**
 * The operations whose answers carry personal data and are recorded (D35): they read
 * `X-Purpose`, and the HTTP server documents and allows that header on their routes.
 */
export const RECORDED_OPERATIONS: ReadonlySet<OperationName> = new Set<OperationName>([
  'list',
  'get',
  'update',
  'setStatus',
  'history',
  'export',
  'match',
  'matches',
])

/** The most characters `X-Purpose` may have (D35). */
export const MAX_PURPOSE_LENGTH = 200
const PURPOSE = /^[\x20-\x7e]+$/

/**
 * The purpose a request states in `X-Purpose` (D35): null when absent; else, trimmed, 1 to 200
 * visible ASCII characters and spaces. HTTP header values are bytes whose text encoding the
 * protocol leaves open, so the log keeps to the characters every client sends alike.
 * @throws ValidationError naming `X-Purpose` for anything else.
 */
export function purposeOf(raw: string | undefined): string | null {
  if (raw === undefined) return null
  const value = raw.trim()
  if (value.length === 0 || value.length > MAX_PURPOSE_LENGTH || !PURPOSE.test(value)) {
    throw new ValidationError([
      {
        field: 'X-Purpose',
        message: `must be 1 to ${MAX_PURPOSE_LENGTH} visible ASCII characters and spaces`,
      },
    ])
  }
  return value
}

/**
 * Records the answers that carry personal data (D35) in the storage's access log; nothing when
 * the storage has none. `record` only queues: the log writes in batches off the request's path.
 */
export class AccessRecorder {
  readonly #log: AccessLogStore | undefined
  readonly #clock: Clock

  constructor(log: AccessLogStore | undefined, clock: Clock) {
    this.#log = log
    this.#clock = clock
  }

  /**
   * Queues one entry for an answer carrying the records `ids`; none for an answer that
   * carries no record (an empty page). A promise only when the log's queue is full.
   */
  record(
    ctx: RequestContext,
    clientId: string,
    operation: AccessOperation,
    ids: readonly number[],
    purpose: string | null,
  ): Promise<void> | undefined {
    if (this.#log === undefined || ids.length === 0) return undefined
    return this.#log.record({
      at: this.#clock.now(),
      client_id: clientId,
      request_id: ctx.requestId ?? randomToken(12),
      operation,
      beneficiary_ids: ids,
      purpose,
    })
  }
}
