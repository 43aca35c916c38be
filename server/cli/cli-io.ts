import { parseArgs, type ParseArgsConfig } from 'node:util'
import { UsageError } from './cli-error.js'
import { didYouMean, nearest } from './did-you-mean.js'
import type { Env, Flags } from './settings.js'

/** What a command may touch of its process: environment, output, and the stop signals. */
export interface CliIo {
  readonly env: Env
  /** Writes one line (or block) to standard output. */
  out(text: string): void
  /** Writes one line to standard error. */
  err(text: string): void
  /**
   * Standard error when it is a terminal: `write` puts `text` as it is, without a newline, for
   * a progress bar that redraws its line; `columns` is the terminal's width. Absent when
   * standard error is a file or a pipe, where a command writes whole lines with `err`.
   */
  readonly terminal?: { write(text: string): void; readonly columns: number }
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
 * `parseArgs` with the CLI's own answers to a mistake: an unknown option is named with the
 * command's options nearest to it ("Did you mean --count?"), a missing value or one given to a
 * switch is said so, and so is an argument too many.
 * @throws UsageError for an unknown option, a missing value, or too many arguments.
 */
export function parseCommand(
  args: readonly string[],
  options: NonNullable<ParseArgsConfig['options']>,
  maxPositionals = 0,
): { values: Flags; positionals: string[] } {
  // Not strict: the tokens are checked here, so that each mistake is told in the CLI's words.
  const { values, positionals, tokens } = parseArgs({
    args: [...args],
    options,
    strict: false,
    allowPositionals: true,
    tokens: true,
  })
  for (const token of tokens) {
    if (token.kind !== 'option') continue
    const option = Object.hasOwn(options, token.name) ? options[token.name] : undefined
    if (option === undefined) throw new UsageError(unknownOption(token.rawName, options))
    if (option.type === 'boolean' && token.value !== undefined) {
      throw new UsageError(`${token.rawName} takes no value`)
    }
    if (option.type === 'string' && token.value === undefined) {
      throw new UsageError(`${token.rawName} needs a value`)
    }
    // What follows looks like an option: the value was forgotten, unless it is "-5" or so.
    if (option.type === 'string' && token.inlineValue === false && token.value!.startsWith('-')) {
      const hint = token.value!.startsWith('--')
        ? ''
        : ` (for one that starts with "-", write ${token.rawName}=${token.value})`
      throw new UsageError(`${token.rawName} needs a value${hint}`)
    }
  }
  if (positionals.length > maxPositionals) {
    throw new UsageError(`unexpected argument ${JSON.stringify(positionals[maxPositionals])}`)
  }
  return { values: values as Flags, positionals }
}

/** "unknown option --cout. Did you mean --count?": long options are matched by name. */
function unknownOption(rawName: string, options: NonNullable<ParseArgsConfig['options']>): string {
  const known = Object.keys(options)
  const near = rawName.startsWith('--') ? nearest(rawName.slice(2), known) : []
  const hint = didYouMean(near.map((name) => `--${name}`))
  return `unknown option ${rawName}${hint === '' ? '' : `. ${hint}`}`
}
