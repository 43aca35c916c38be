/**
 * A usage or configuration mistake: the command line or an environment variable is wrong. The
 * CLI prints its message as one line naming the setting and exits with status 2.
 */
export class UsageError extends Error {
  /** The flag or environment variable at fault, when there is one (`--port`, `PORT`). */
  readonly setting: string | undefined

  constructor(message: string, setting?: string) {
    super(setting === undefined ? message : `invalid ${setting}: ${message}`)
    this.name = 'UsageError'
    this.setting = setting
  }
}

/** A command that ran and failed (exit status 1), with a message meant for the operator. */
export class CommandFailedError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'CommandFailedError'
  }
}
