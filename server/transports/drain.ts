/**
 * How a transport's graceful shutdown waits for the requests in flight: `wait` resolves when the
 * transport reports with `idle` that the last one has settled, or once the grace period is over,
 * whichever comes first.
 */
export class Drain {
  #idle: (() => void) | undefined

  /** Resolves at once when nothing is in flight, else on `idle` or after `graceMs`. */
  async wait(inFlight: number, graceMs: number): Promise<void> {
    if (inFlight === 0) return
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, graceMs)
      this.#idle = () => {
        clearTimeout(timer)
        resolve()
      }
    })
  }

  /** Tells a waiting shutdown that nothing is in flight any more. */
  idle(): void {
    this.#idle?.()
  }
}
