import Type from 'typebox'
import { Compile } from 'typebox/compile'
import type { Admission } from './admission.js'
import type { HistoryAction } from './beneficiary.js'
import type { RequestContext, Result } from './beneficiary-service.js'
import { CursorExpiredError, NotFoundError } from './errors.js'
import type { Clock } from './ports/clock.js'
import type { EventPage, EventStore, StoredEvent } from './ports/event-store.js'
import { isoTime } from './time.js'
import { ProblemList } from './validation/problem-list.js'
import { schemaProblems } from './validation/schema-problems.js'

/** The kinds of change the feed reports (D33). */
export type ChangeEventType = `beneficiary.${HistoryAction}`

/** One event of the change feed (D33): ids and names, never a personal value. */
export interface ChangeEvent {
  /** The cursor to resume right after this event. Opaque. */
  readonly id: string
  readonly type: ChangeEventType
  readonly beneficiary_id: number
  /** ISO 8601 UTC, the time of the change (its history entry's `at`). */
  readonly occurred_at: string
  readonly client_id: string
  readonly request_id: string
  /** Names of the fields the change touched; empty for a delete. */
  readonly changed_fields: readonly string[]
}

/** The answer of `GET /events` (D33). */
export interface ChangeEventPage {
  readonly data: readonly ChangeEvent[]
  /** Where to resume, also when `data` is empty. */
  readonly next: string
}

/** One event of the feed, for the OpenAPI document (D33). */
export const ChangeEventSchema = Type.Object({
  id: Type.String({ description: 'Cursor to resume right after this event; opaque.' }),
  type: Type.Enum([
    'beneficiary.created',
    'beneficiary.updated',
    'beneficiary.status_changed',
    'beneficiary.deleted',
  ]),
  beneficiary_id: Type.Integer({ minimum: 1 }),
  occurred_at: Type.String({ format: 'date-time' }),
  client_id: Type.String(),
  request_id: Type.String(),
  changed_fields: Type.Array(Type.String(), {
    description: 'Names of the fields the change touched; never their values.',
  }),
})

/** The answer of `GET /events`, for the OpenAPI document (D33). */
export const ChangeEventPageSchema = Type.Object({
  data: Type.Array(ChangeEventSchema),
  next: Type.String({
    description: 'Where to resume (`after`), also when `data` is empty; opaque.',
  }),
})

/** Highest `limit` (D33). */
export const MAX_EVENTS_LIMIT = 1000
/** Longest `wait` in seconds (D33). */
export const MAX_EVENTS_WAIT = 30

/** Query parameters of `GET /events` (D33). */
export const EventsQueryParams = Type.Object({
  after: Type.Optional(
    Type.String({
      maxLength: 200,
      description:
        'Resume after this cursor: the `next` of the previous answer, or an event `id`. Absent: from the oldest event kept.',
    }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_EVENTS_LIMIT,
      default: 100,
      description: 'Events per answer, 1–1000.',
    }),
  ),
  wait: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_EVENTS_WAIT,
      default: 0,
      description:
        'Seconds to hold an empty answer until an event arrives (long polling), 0–30. The answer comes as soon as there is an event.',
    }),
  ),
})

/** What `events` takes: `limit` and `wait` as numbers or strings of digits. */
export type EventsQueryInput = {
  readonly after?: string | undefined
  readonly limit?: number | string | undefined
  readonly wait?: number | string | undefined
}

/** Validated query of `GET /events`: `after` already unwrapped to the adapter's position. */
export interface EventsParams {
  readonly after: string | undefined
  readonly limit: number
  readonly wait: number
}

const validator = Compile(EventsQueryParams)
const DIGITS = /^[0-9]+$/
/** An adapter's position: digits and dots, as `EventStore` hands them out. */
const POSITION = /^[0-9][0-9.]{0,79}$/
const CURSOR_PREFIX = 'e1.'
const INVALID_CURSOR = 'is not a cursor this service handed out'

/** Validates the query of `GET /events`; every offending parameter is named. */
export function parseEventsQuery(query: Readonly<Record<string, unknown>>): EventsParams {
  const problems = new ProblemList()
  const copy: Record<string, unknown> = {}
  for (const name of ['limit', 'wait'] as const) {
    const raw = Object.hasOwn(query, name) ? query[name] : undefined
    if (raw === undefined) continue
    if (
      typeof raw === 'number'
        ? Number.isSafeInteger(raw)
        : typeof raw === 'string' && DIGITS.test(raw) && raw.length <= 15
    )
      copy[name] = Number(raw)
    else problems.add(name, 'must be a whole number')
  }
  const after = Object.hasOwn(query, 'after') ? query['after'] : undefined
  if (after !== undefined) copy['after'] = after
  if (!validator.Check(copy)) problems.addAll(schemaProblems(validator, copy))
  let position: string | undefined
  if (typeof after === 'string' && !problems.has('after')) {
    position = positionOf(after)
    if (position === undefined) problems.add('after', INVALID_CURSOR)
  }
  problems.throwIfAny()
  return {
    after: position,
    limit: (copy['limit'] as number | undefined) ?? 100,
    wait: (copy['wait'] as number | undefined) ?? 0,
  }
}

/** The timers and base64 functions of every JavaScript runtime the core runs on. */
const runtime = globalThis as unknown as {
  setTimeout(work: () => void, ms: number): unknown
  clearTimeout(timer: unknown): void
  setInterval(work: () => void, ms: number): unknown
  clearInterval(timer: unknown): void
  btoa(text: string): string
  atob(text: string): string
}

/** The opaque cursor of an adapter's position: base64url, so clients do not read into it. */
export function cursorOf(position: string): string {
  return runtime
    .btoa(CURSOR_PREFIX + position)
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '')
}

/** The position inside a cursor, or `undefined` when it is not one. */
export function positionOf(cursor: string): string | undefined {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor) || cursor.length % 4 === 1) return undefined
  const text = runtime.atob(cursor.replaceAll('-', '+').replaceAll('_', '/'))
  if (!text.startsWith(CURSOR_PREFIX)) return undefined
  const position = text.slice(CURSOR_PREFIX.length)
  return POSITION.test(position) ? position : undefined
}

/** The event as the feed shows it. */
export function changeEventOf(event: StoredEvent): ChangeEvent {
  return {
    id: cursorOf(event.position),
    type: `beneficiary.${event.action}`,
    beneficiary_id: event.beneficiaryId,
    occurred_at: isoTime(event.at),
    client_id: event.clientId,
    request_id: event.requestId,
    changed_fields: event.changedFields,
  }
}

/** How often a long poll looks for events written by other processes. */
const POLL_MS = 250

/**
 * The change feed operation (D33), with its long polls. Waiting requests share one ticker: each
 * tick asks the storage for its head marker once, however many requests wait, and wakes them
 * all when it moved; a write through this process wakes them at once (`notify`).
 */
export class EventFeed {
  readonly #store: EventStore | undefined
  readonly #clock: Clock
  readonly #admission: Admission
  /** Each waiting request's wake-up, with its deadline on the injected clock. */
  readonly #waiters = new Map<() => void, number>()
  #ticker: unknown
  #head: string | undefined
  #polling = false

  constructor(store: EventStore | undefined, clock: Clock, admission: Admission) {
    this.#store = store
    this.#clock = clock
    this.#admission = admission
  }

  /** Tells waiting long polls that this process wrote an event. */
  notify(): void {
    if (this.#waiters.size === 0) return
    const waiters = [...this.#waiters.keys()]
    this.#waiters.clear()
    for (const wake of waiters) wake()
  }

  read(ctx: RequestContext, query: EventsQueryInput): Promise<Result<ChangeEventPage>> {
    return this.#admission.admit('events', ctx, async ({ claims, rateLimit }) => {
      const params = parseEventsQuery(query as Readonly<Record<string, unknown>>)
      const store = this.#store
      if (store === undefined) throw new NotFoundError('This storage keeps no change feed.')
      let page = await this.#page(store, params.after, params.limit)
      if (page.events.length === 0 && params.wait > 0) {
        const deadline = this.#clock.now() + params.wait * 1000
        const stopAt = Date.now() + params.wait * 1000
        while (page.events.length === 0) {
          const left = Math.min(deadline - this.#clock.now(), stopAt - Date.now())
          if (left <= 0) break
          await this.#nextChange(left, deadline)
          page = await this.#page(store, page.next, params.limit)
        }
      }
      return {
        value: { data: page.events.map(changeEventOf), next: cursorOf(page.next) },
        rateLimit,
        clientId: claims.clientId,
      }
    })
  }

  /** Stops the ticker; waiting requests answer at their next check. */
  close(): void {
    if (this.#ticker !== undefined) runtime.clearInterval(this.#ticker)
    this.#ticker = undefined
    this.notify()
  }

  async #page(store: EventStore, after: string | undefined, limit: number): Promise<EventPage> {
    const read = await store.read(after, limit)
    if (read === 'expired') throw new CursorExpiredError()
    if (read === 'invalid') {
      const problems = new ProblemList()
      problems.add('after', INVALID_CURSOR)
      problems.throwIfAny()
      throw new Error('unreachable')
    }
    return read
  }

  /**
   * Resolves on the next change seen, after `ms` of real time, or once the injected clock passes
   * `deadline` (each tick looks at it).
   */
  #nextChange(ms: number, deadline: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = runtime.setTimeout(done, ms)
      const waiters = this.#waiters
      function done(): void {
        runtime.clearTimeout(timer)
        waiters.delete(done)
        resolve()
      }
      waiters.set(done, deadline)
      this.#startTicker()
    })
  }

  #startTicker(): void {
    if (this.#ticker !== undefined) return
    const ticker = runtime.setInterval(() => void this.#tick(), POLL_MS)
    // Node: a waiting request, not the ticker, keeps the process alive.
    ;(ticker as { unref?: () => void }).unref?.()
    this.#ticker = ticker
  }

  async #tick(): Promise<void> {
    if (this.#waiters.size === 0) {
      runtime.clearInterval(this.#ticker)
      this.#ticker = undefined
      this.#head = undefined
      return
    }
    if (this.#polling || this.#store === undefined) return
    this.#polling = true
    try {
      const head = await this.#store.head()
      if (head !== this.#head) {
        // The first tick wakes them too: an event may have come between their read and now.
        this.#head = head
        return this.notify()
      }
      const now = this.#clock.now()
      for (const [wake, deadline] of this.#waiters) if (now >= deadline) wake()
    } catch {
      // A failing storage shows on the next read of each waiter; the tick only wakes them.
    } finally {
      this.#polling = false
    }
  }
}
