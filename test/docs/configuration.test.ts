import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import {
  BACKUP_HELP,
  CLIENTS_HELP,
  MIGRATE_HELP,
  SEED_HELP,
  SERVE_HELP,
} from '../../server/cli/help.js'
import { SEED_MEMORY_MIB } from '../../server/cli/seed-progress.js'
import { readServeConfig } from '../../server/cli/serve-config.js'
import { Settings, type Env } from '../../server/cli/settings.js'

// docs/configuration.md against the command-line tool's own settings: what `serve` reads
// (every flag and variable asked of `Settings`, with its default) and what each command's help
// names. A flag added to the tool without its row in the page fails here.

const page = readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8')

/** One setting as `serve` reads it: its flag, its environment variable and its default. */
interface Read {
  variable: string | undefined
  fallback: string | undefined
}

/** `Settings` that notes every setting asked of it, with the default given for it. */
class RecordingSettings extends Settings {
  readonly read = new Map<string, Read>()

  #note(flag: string, variable: string | undefined, fallback?: string | number): void {
    const seen = this.read.get(flag) ?? { variable: undefined, fallback: undefined }
    seen.variable ??= variable
    if (fallback !== undefined) seen.fallback ??= String(fallback)
    this.read.set(flag, seen)
  }

  override raw(flag: string, variable: string | undefined) {
    this.#note(flag, variable)
    return super.raw(flag, variable)
  }

  override string(flag: string, variable: string | undefined, fallback: string): string {
    this.#note(flag, variable, fallback)
    return super.string(flag, variable, fallback)
  }

  override integer(
    flag: string,
    variable: string | undefined,
    fallback: number,
    min: number,
    max: number,
  ): number
  override integer(
    flag: string,
    variable: string | undefined,
    fallback: undefined,
    min: number,
    max: number,
  ): number | undefined
  override integer(
    flag: string,
    variable: string | undefined,
    fallback: number | undefined,
    min: number,
    max: number,
  ): number | undefined {
    this.#note(flag, variable, fallback)
    return fallback === undefined
      ? super.integer(flag, variable, undefined, min, max)
      : super.integer(flag, variable, fallback, min, max)
  }

  override choice<T extends string>(
    flag: string,
    variable: string | undefined,
    fallback: T,
    choices: readonly T[],
  ): T {
    this.#note(flag, variable, fallback)
    return super.choice(flag, variable, fallback, choices)
  }
}

/** Every setting `serve` reads: once bare, then with Redis and with tracing (whose own settings follow them). */
function serveSettings(): Map<string, Read> {
  const all = new Map<string, Read>()
  const environments: Env[] = [
    {},
    { REDIS_URL: 'redis://127.0.0.1:6379' },
    { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' },
  ]
  for (const env of environments) {
    const settings = new RecordingSettings({}, env)
    readServeConfig(settings)
    for (const [flag, read] of settings.read) {
      const known = all.get(flag)
      all.set(flag, {
        variable: known?.variable ?? read.variable,
        fallback: known?.fallback ?? read.fallback,
      })
    }
  }
  return all
}

/** The long options a help text names, `--help` aside. */
function optionsOf(help: string): Set<string> {
  const names = [...help.matchAll(/(?<![\w-])--([a-z][a-z-]*)/g)].map((match) => match[1]!)
  return new Set(names.filter((name) => name !== 'help'))
}

/** A row of the `serve` table: its flag (or undefined), variable and default cells. */
interface Row {
  readonly flag: string | undefined
  readonly variable: string | undefined
  readonly fallback: string
}

/** The rows of the table under `## \`serve\``, the flag and variable read from their cells. */
function serveRows(): Row[] {
  const start = page.indexOf('\n## `serve`\n')
  assert.ok(start >= 0, 'the page has a section `serve`')
  const end = page.indexOf('\n## ', start + 1)
  const section = page.slice(start, end === -1 ? undefined : end)
  const rows = section.split('\n').filter((line) => line.startsWith('| '))
  assert.match(rows[0]!, /^\| Flag +\| Environment +\| Default +\| Meaning +\|$/)
  return rows.slice(2).map((line) => {
    const cells = line
      .slice(1, -1)
      .split(/(?<!\\)\|/)
      .map((cell) => cell.trim())
    const flag = /^`--([a-z][a-z-]*)/.exec(cells[0]!)?.[1]
    const variable = /^`([A-Z][A-Z0-9_]*)`$/.exec(cells[1]!)?.[1]
    return { flag, variable, fallback: cells[2]! }
  })
}

describe('docs/configuration.md, against the settings of the command-line tool', () => {
  const read = serveSettings()
  const rows = serveRows()
  const flags = optionsOf(SERVE_HELP)

  it('has a row for every flag serve reads, with its environment variable and its default', () => {
    for (const [flag, { variable, fallback }] of read) {
      if (!flags.has(flag)) continue
      const row = rows.find((candidate) => candidate.flag === flag)
      assert.ok(row !== undefined, `docs/configuration.md has no row for --${flag}`)
      assert.equal(row.variable, variable, `--${flag}: its environment variable`)
      if (fallback !== undefined) {
        assert.ok(
          row.fallback.includes(`\`${fallback}\``),
          `--${flag}: the default cell "${row.fallback}" does not name \`${fallback}\``,
        )
      }
    }
  })

  it('has a row for every variable serve reads that has no flag', () => {
    const environmentOnly = [...read].filter(([flag]) => !flags.has(flag))
    assert.ok(environmentOnly.length > 0)
    for (const [, { variable }] of environmentOnly) {
      assert.ok(variable !== undefined)
      const row = rows.find((candidate) => candidate.variable === variable)
      assert.ok(row !== undefined, `docs/configuration.md has no row for ${variable}`)
      assert.equal(row.flag, undefined, `${variable} is read from the environment only`)
    }
  })

  it('has a row for every option of serve --help, and no row for a setting that is gone', () => {
    for (const flag of flags) {
      assert.ok(
        rows.some((row) => row.flag === flag),
        `docs/configuration.md has no row for --${flag}`,
      )
    }
    for (const row of rows) {
      const known =
        row.flag === undefined
          ? [...read.values()].some(({ variable }) => variable === row.variable)
          : read.has(row.flag) && flags.has(row.flag)
      assert.ok(known, `a row for a setting serve does not read: ${row.flag ?? row.variable}`)
    }
  })

  it("names every option of the other commands' help", () => {
    for (const help of [CLIENTS_HELP, MIGRATE_HELP, BACKUP_HELP, SEED_HELP]) {
      for (const option of optionsOf(help)) {
        assert.ok(page.includes(`--${option}`), `docs/configuration.md does not name --${option}`)
      }
    }
  })

  it('states the memory seed announces, as the command computes it', () => {
    const { sqlite, postgres } = SEED_MEMORY_MIB
    for (const figure of [
      `${sqlite.upToAMillion} MiB up to a million`,
      `${sqlite.perFurtherMillion} MiB more per`,
      `PostgreSQL ${postgres.upToAMillion} MiB and ${postgres.perFurtherMillion} MiB more`,
    ]) {
      assert.ok(page.replaceAll('\n', ' ').includes(figure), figure)
    }
  })
})
