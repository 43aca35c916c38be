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
 * methods, route patterns, statuses, durations and client ids (D25); the redaction below is a
 * second line of defence should anyone ever log a request or a body.
 *
 * @example
 * const logger = createLogger({ level: 'warn' })
 */
export function createLogger(options: LoggerOptions = {}): pino.Logger {
  return pino(
    {
      level: options.level ?? 'info',
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
          'authorization',
          '*.authorization',
          'headers.authorization',
          '*.headers.authorization',
          'client_secret',
          '*.client_secret',
          'access_token',
          '*.access_token',
          'refresh_token',
          '*.refresh_token',
          'body',
          '*.body',
        ],
        censor: '[redacted]',
      },
    },
    options.destination ?? pino.destination({ sync: false }),
  )
}
