import { DRAIN_BYTES } from './transport.js'

/**
 * The rest of a refused body, read and dropped before the refusal is answered (see
 * `DRAIN_BYTES`): `done` runs once, when the body has ended, once `DRAIN_BYTES` more have
 * arrived, or after `timeoutMs`, whichever comes first.
 */
export class RefusedBody {
  #left = DRAIN_BYTES
  #done: (() => void) | undefined
  readonly #timer: NodeJS.Timeout

  constructor(done: () => void, timeoutMs: number) {
    this.#done = done
    this.#timer = setTimeout(() => this.end(), timeoutMs).unref()
  }

  /** Counts `bytes` more of the body, the last ones when `last`. */
  take(bytes: number, last: boolean): void {
    this.#left -= bytes
    if (last || this.#left < 0) this.end()
  }

  /** Stops reading now. */
  end(): void {
    const done = this.#done
    if (done === undefined) return
    this.#done = undefined
    clearTimeout(this.#timer)
    done()
  }
}
