import type { AnswerBatch } from './answer-batch.js'

/** Milliseconds of the event loop a slice of the queue is meant to take. */
const SLICE_MS = 2
/** Requests served in one slice at most, whatever they cost. */
const MAX_SLICE = 64
/** What a request is taken to cost before any was measured: 0.1 ms. */
const FIRST_GUESS_MS = 0.1
/** Weight of the last slice in the running estimate of a request's cost. */
const SMOOTHING = 0.3

/**
 * Requests served first come, first served, a slice of about {@link SLICE_MS} at a time, each
 * slice's answers written (`AnswerBatch`) before the next slice starts.
 *
 * Served as each turn of the event loop read them, with their answers written at the end of the
 * turn, requests waited one turn or two: a client sends its next request as it reads the burst of
 * answers, and those of its requests that arrive after the loop polled again wait for that whole
 * turn, then for their own. Measured at 50 connections on the benchmark's list requests: a turn
 * answered 38 requests, the other 12 were on their way, and the 99th percentile of the latency was
 * 2.0–2.8 times the median. Served in slices, with a poll of the loop (without waiting) between
 * two, a request that arrives joins the queue behind those that came before it, and waits for them
 * alone: the 99th percentile came to 1.5–2.2 times the median, at the same CPU per request or less.
 * A slice is sized from what the last ones cost a request (the time from one slice to the next, the
 * requests' own work and their reading included), so that a cheap request (a get by id) is served
 * in slices of dozens, and the loop does not turn more than it must.
 */
export class ServingQueue<T> {
  readonly #serve: (item: T) => void
  readonly #answers: Pick<AnswerBatch, 'writeNow'>
  readonly #now: () => number
  readonly #waiting: (T | undefined)[] = []
  /** The place in `#waiting` of the next item to serve. */
  #head = 0
  #scheduled = false
  #msPerItem = FIRST_GUESS_MS
  #sliceStartedAt = 0
  /** Items served by the last slice, while another follows it; 0 when none does. */
  #sliceSize = 0
  readonly #serveSlice = (): void => this.#slice()

  /**
   * @param serve Starts serving one item; it must not throw (an asynchronous handler's failure is
   *   the handler's to answer).
   * @param answers Where the items' answers wait: written before each slice.
   * @param now The clock slices are timed with, in milliseconds.
   */
  constructor(
    serve: (item: T) => void,
    answers: Pick<AnswerBatch, 'writeNow'>,
    now: () => number = () => performance.now(),
  ) {
    this.#serve = serve
    this.#answers = answers
    this.#now = now
  }

  /** Queues `item`, served after every item queued before it. */
  add(item: T): void {
    this.#waiting.push(item)
    if (!this.#scheduled) {
      this.#scheduled = true
      setImmediate(this.#serveSlice)
    }
  }

  #slice(): void {
    // The last slice's answers first: their clients' next requests join the queue meanwhile.
    this.#answers.writeNow()
    const now = this.#now()
    if (this.#sliceSize > 0) {
      const last = (now - this.#sliceStartedAt) / this.#sliceSize
      this.#msPerItem += SMOOTHING * (last - this.#msPerItem)
    }
    const waiting = this.#waiting.length - this.#head
    if (waiting === 0) {
      this.#waiting.length = 0
      this.#head = 0
      this.#sliceSize = 0
      this.#scheduled = false
      return
    }
    const size = Math.min(waiting, MAX_SLICE, Math.max(1, Math.floor(SLICE_MS / this.#msPerItem)))
    this.#sliceStartedAt = now
    this.#sliceSize = size
    // The next slice, or the check that none is left, comes after a poll of the loop.
    setImmediate(this.#serveSlice)
    const end = this.#head + size
    while (this.#head < end) {
      const item = this.#waiting[this.#head] as T
      this.#waiting[this.#head++] = undefined
      this.#serve(item)
    }
  }
}
