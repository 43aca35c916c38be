import { UsageError } from './cli-error.js'

/** Flags as `parseArgs` returns them: strings, booleans, or absent. */
export type Flags = Readonly<Record<string, string | boolean | undefined>>

/** Environment variables. */
export type Env = Readonly<Record<string, string | undefined>>

/**
 * Reads one setting from its flag, else its environment variable, and remembers which of the
 * two it came from so that an error can name it.
 */
export class Settings {
  readonly #flags: Flags
  readonly #env: Env

  constructor(flags: Flags, env: Env) {
    this.#flags = flags
    this.#env = env
  }

  /** The raw value and the name to blame for it, or `undefined` when neither is set. */
  raw(flag: string, variable: string | undefined): { value: string; name: string } | undefined {
    const fromFlag = this.#flags[flag]
    if (typeof fromFlag === 'string') return { value: fromFlag, name: `--${flag}` }
    if (variable === undefined) return undefined
    const fromEnv = this.#env[variable]
    if (fromEnv !== undefined && fromEnv !== '') return { value: fromEnv, name: variable }
    return undefined
  }

  string(flag: string, variable: string | undefined, fallback: string): string {
    return this.raw(flag, variable)?.value ?? fallback
  }

  optionalString(flag: string, variable: string | undefined): string | undefined {
    return this.raw(flag, variable)?.value
  }

  /** A whole number in `[min, max]`. */
  integer(
    flag: string,
    variable: string | undefined,
    fallback: number,
    min: number,
    max: number,
  ): number
  integer(
    flag: string,
    variable: string | undefined,
    fallback: undefined,
    min: number,
    max: number,
  ): number | undefined
  integer(
    flag: string,
    variable: string | undefined,
    fallback: number | undefined,
    min: number,
    max: number,
  ): number | undefined {
    const raw = this.raw(flag, variable)
    if (raw === undefined) return fallback
    const value = /^[0-9]+$/.test(raw.value.trim()) ? Number(raw.value.trim()) : NaN
    if (!(value >= min && value <= max)) {
      throw new UsageError(
        `${JSON.stringify(raw.value)} is not a whole number from ${min} to ${max}`,
        raw.name,
      )
    }
    return value
  }

  /** One of `choices`. */
  choice<T extends string>(
    flag: string,
    variable: string | undefined,
    fallback: T,
    choices: readonly T[],
  ): T {
    const raw = this.raw(flag, variable)
    if (raw === undefined) return fallback
    if (!(choices as readonly string[]).includes(raw.value)) {
      throw new UsageError(
        `${JSON.stringify(raw.value)} is not one of ${choices.join(', ')}`,
        raw.name,
      )
    }
    return raw.value as T
  }

  /** A comma- or space-separated list. */
  list(flag: string, variable: string | undefined): string[] {
    const raw = this.raw(flag, variable)
    if (raw === undefined) return []
    return raw.value.split(/[\s,]+/).filter((item) => item !== '')
  }

  /** The name a setting would be blamed under: the flag if given, else the variable. */
  nameOf(flag: string, variable: string | undefined): string {
    return this.raw(flag, variable)?.name ?? variable ?? `--${flag}`
  }
}
