import { parseArgs, type ParseArgsConfig } from 'node:util'
import { UsageError } from './cli-error.js'
import type { Env, Flags } from './settings.js'

/** What a command may touch of its process: environment, output, and the stop signals. */
export interface CliIo {
  readonly env: Env
  /** Writes one line (or block) to standard output. */
  out(text: string): void
  /** Writes one line to standard error. */
  err(text: string): void
  /** Where `serve` waits for SIGTERM and SIGINT. */
  readonly signals: { once(signal: 'SIGTERM' | 'SIGINT', listener: () => void): unknown }
}

/** Options every command takes. */
export const COMMON_OPTIONS = {
  db: { type: 'string' },
  'database-url': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options']

/**
 * `parseArgs` in strict mode, its errors turned into `UsageError`s.
 * @throws UsageError for an unknown option, a missing value, or too many arguments.
 */
export function parseCommand(
  args: readonly string[],
  options: NonNullable<ParseArgsConfig['options']>,
  maxPositionals = 0,
): { values: Flags; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({
      args: [...args],
      options,
      strict: true,
      allowPositionals: true,
    })
    if (positionals.length > maxPositionals) {
      throw new UsageError(`unexpected argument ${JSON.stringify(positionals[maxPositionals])}`)
    }
    return { values: values as Flags, positionals }
  } catch (error) {
    if (error instanceof UsageError) throw error
    throw new UsageError((error as Error).message)
  }
}
