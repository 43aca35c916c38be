import { writeSync } from 'node:fs'
import pino from 'pino'

/** Options of `createLogger`. */
export interface LoggerOptions {
  /** pino level: `trace`, `debug`, `info` (default), `warn`, `error`, `fatal` or `silent`. */
  readonly level?: string | undefined
  /** Where lines go. Default: standard output, a turn of the event loop at a time. */
  readonly destination?: pino.DestinationStream | undefined
}

/** pino levels, for validating configuration. */
export const LOG_LEVELS: readonly string[] = [
  'trace',
  'debug',
  'info',
  'warn',
  'error',
  'fatal',
  'silent',
]

/**
 * The server's logger: pino, one JSON object per line. The handler logs only request ids,
 * methods, route patterns, statuses, durations and client ids, so nothing secret or personal
 * can reach a line (D25); pino's path redaction is left out on purpose, as it costs more per
 * request than anything else the server does for a log line.
 *
 * Standard output gets the lines of one turn of the event loop in one write
 * (`TurnBufferedDestination`). `flush()` before exiting.
 *
 * @example
 * const logger = createLogger({ level: 'warn' })
 */
export function createLogger(options: LoggerOptions = {}): pino.Logger {
  return pino(
    // Epoch milliseconds (pino's default): an ISO string per line cost more than the rest of it.
    { level: options.level ?? 'info', timestamp: pino.stdTimeFunctions.epochTime },
    options.destination ?? new TurnBufferedDestination(1),
  )
}

/** How long a write to a full pipe waits before it tries again, in milliseconds. */
const FULL_PIPE_WAIT_MS = 10

/**
 * A pino destination that holds the lines of one turn of the event loop and writes them with one
 * system call when the turn ends, like the server's answers. pino's own writer (sonic-boom)
 * measured its whole pending string at every line when buffering (`Buffer.byteLength`), and
 * writes each line with a system call when it does not: 5.1 µs per line against 3.0 µs here
 * (pino's serialisation alone is 1.8 µs). The write is synchronous, as pino's default is: a
 * partial write is continued, and a full non-blocking pipe is waited for, not dropped. Lines
 * still held when the process exits are written then.
 */
export class TurnBufferedDestination implements pino.DestinationStream {
  readonly #fd: number
  #lines: string[] = []
  // A destination that cannot be written to (a closed pipe) loses those lines; it must not take
  // the server down from a timer or keep the process from exiting. `flush()` reports it.
  readonly #endOfTurn = (): void => this.#writeHeldOrDrop()
  readonly #onExit = (): void => this.#writeHeldOrDrop()

  /** @param fd The file descriptor to write to (1 for standard output). */
  constructor(fd: number) {
    this.#fd = fd
    process.once('exit', this.#onExit)
  }

  write(line: string): void {
    if (this.#lines.push(line) === 1) setImmediate(this.#endOfTurn)
  }

  /** Writes out every line received so far, then calls `callback`. */
  flush(callback?: (error?: Error) => void): void {
    try {
      this.#writeHeld()
    } catch (error) {
      callback?.(error instanceof Error ? error : new Error(String(error)))
      return
    }
    callback?.()
  }

  #writeHeldOrDrop(): void {
    try {
      this.#writeHeld()
    } catch {
      // Dropped, see #endOfTurn.
    }
  }

  #writeHeld(): void {
    if (this.#lines.length === 0) return
    const bytes = Buffer.from(this.#lines.join(''))
    this.#lines = []
    let written = 0
    while (written < bytes.length) {
      try {
        written += writeSync(this.#fd, bytes, written)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, FULL_PIPE_WAIT_MS)
      }
    }
  }
}
