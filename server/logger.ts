import pino from 'pino'

/** Options of `createLogger`. */
export interface LoggerOptions {
  /** pino level: `trace`, `debug`, `info` (default), `warn`, `error`, `fatal` or `silent`. */
  readonly level?: string | undefined
  /** Where lines go. Default: standard output. */
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
 * Standard output is written in blocks of 4 KiB or every 250 ms, whichever comes first: one
 * write per line would cost a system call per request. `flush()` before exiting.
 *
 * @example
 * const logger = createLogger({ level: 'warn' })
 */
export function createLogger(options: LoggerOptions = {}): pino.Logger {
  return pino(
    // Epoch milliseconds (pino's default): an ISO string per line cost more than the rest of it.
    { level: options.level ?? 'info', timestamp: pino.stdTimeFunctions.epochTime },
    options.destination ??
      pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 250 }),
  )
}
