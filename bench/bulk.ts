import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { admin, databaseUrl } from './pg-bench-data.js'
import { exitOf, type ProcessGroup } from './process-group.js'

/** Where the bulk benchmark runs its commands and writes its results. */
export interface BulkBenchOptions {
  readonly group: ProcessGroup
  readonly distRoot: string
  readonly benchDir: string
  readonly rows: number
  readonly sqlite: boolean
  readonly postgres: boolean
}

/** One command timed: wall-clock seconds and the process's peak resident set. */
export interface BulkTiming {
  readonly storage: 'sqlite' | 'postgres'
  readonly step: string
  readonly seconds: number
  readonly peakRssMiB: number
  /** The size of what an export wrote, in bytes. */
  readonly bytes?: number
}

const IMPORT_DATABASE = 'bench_bulk_import'
const SEED_DATABASE = 'bench_bulk_seed'
const STEP_TIMEOUT_MS = 60 * 60 * 1000

/**
 * `npm run bench -- --only bulk`: the CLI's `seed --count N` and `import` of the same N records
 * on the same storage, in one run, so that their ratio is taken on one machine at one time.
 * Per storage: seed N into an empty database; export it as NDJSON and as CSV (timed too: the
 * export streams); import the NDJSON into another empty database. Each command runs as its own
 * process, one at a time, with its peak RSS read by `peak-rss.js`. Prints one table and writes
 * it to `bench/results/bulk-<time>.json`. The files and databases it made are removed.
 */
export async function runBulkBench(options: BulkBenchOptions): Promise<void> {
  // The exports hold the made-up records: the owner's alone, as the other bench data.
  mkdirSync(join(options.benchDir, '.data'), { recursive: true, mode: 0o700 })
  const work = mkdtempSync(join(options.benchDir, '.data', 'bulk-'))
  const timings: BulkTiming[] = []
  const run = async (
    storage: BulkTiming['storage'],
    step: string,
    args: readonly string[],
    output?: string,
  ): Promise<BulkTiming> => {
    const rssFile = join(work, 'peak-rss')
    const started = performance.now()
    const child = options.group.spawn(
      process.execPath,
      [
        '--import',
        join(options.distRoot, 'bench', 'peak-rss.js'),
        join(options.distRoot, 'server', 'cli.js'),
        ...args,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, PEAK_RSS_FILE: rssFile } },
    )
    let errors = ''
    child.stderr?.on('data', (chunk: Buffer) => (errors = (errors + chunk.toString()).slice(-2000)))
    const watchdog = setTimeout(() => void options.group.stop(child), STEP_TIMEOUT_MS)
    const code = await exitOf(child)
    clearTimeout(watchdog)
    if (code !== 0) throw new Error(`${storage} ${step} failed (${String(code)}): ${errors}`)
    const timing: BulkTiming = {
      storage,
      step,
      seconds: Math.round((performance.now() - started) / 100) / 10,
      peakRssMiB: Math.round(Number(readFileSync(rssFile, 'utf8')) / 1024),
      ...(output !== undefined && { bytes: statSync(output).size }),
    }
    timings.push(timing)
    console.log(
      `${storage.padEnd(8)} ${step.padEnd(12)} ${timing.seconds.toFixed(1).padStart(7)} s  ` +
        `peak RSS ${String(timing.peakRssMiB).padStart(4)} MiB`,
    )
    return timing
  }
  const count = String(options.rows)
  const ndjson = join(work, 'export.ndjson')
  const csv = join(work, 'export.csv')
  try {
    if (options.sqlite) {
      const seeded = join(work, 'seeded.sqlite')
      const imported = join(work, 'imported.sqlite')
      await run('sqlite', 'seed', ['seed', '--count', count, '--db', seeded])
      await run('sqlite', 'export ndjson', ['export', '--db', seeded, '--out', ndjson], ndjson)
      await run(
        'sqlite',
        'export csv',
        ['export', '--db', seeded, '--format', 'csv', '--out', csv],
        csv,
      )
      rmSync(seeded)
      await run('sqlite', 'import', importArgs(ndjson, work, ['--db', imported]))
      rmSync(imported)
    }
    if (options.postgres) {
      await recreate(SEED_DATABASE)
      await recreate(IMPORT_DATABASE)
      const seeded = databaseUrl(SEED_DATABASE)
      await run('postgres', 'seed', ['seed', '--count', count, '--database-url', seeded])
      if (!options.sqlite) {
        await run(
          'postgres',
          'export ndjson',
          ['export', '--database-url', seeded, '--out', ndjson],
          ndjson,
        )
      }
      await drop(SEED_DATABASE)
      const target = ['--database-url', databaseUrl(IMPORT_DATABASE)]
      await run('postgres', 'import', importArgs(ndjson, work, target))
      await drop(IMPORT_DATABASE)
    }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
  const date = new Date()
  console.log(`\n${date.toISOString()}, ${options.rows.toLocaleString('en-US')} records\n`)
  console.log(formatBulkTable(timings))
  const resultsDir = join(options.benchDir, 'results')
  mkdirSync(resultsDir, { recursive: true })
  const file = join(
    resultsDir,
    `bulk-${date
      .toISOString()
      .replace(/:/g, '-')
      .replace(/\.\d+Z$/, 'Z')}.json`,
  )
  writeFileSync(
    file,
    `${JSON.stringify({ date: date.toISOString(), rows: options.rows, timings }, null, 2)}\n`,
  )
  console.log(`\nwritten to ${file}`)
}

/** The import of `file` with every row's outcome written beside it, as an operator runs it. */
function importArgs(file: string, work: string, target: readonly string[]): string[] {
  return [
    'import',
    '--file',
    file,
    '--ignore-assigned',
    '--report',
    join(work, 'report.ndjson'),
    ...target,
  ]
}

/** Each step with its time and, for the import, its time as a multiple of the seed's. */
export function formatBulkTable(timings: readonly BulkTiming[]): string {
  const lines = [
    '| storage | step | seconds | × seed | peak RSS |',
    '| --- | --- | --- | --- | --- |',
  ]
  for (const timing of timings) {
    const seed = timings.find((t) => t.storage === timing.storage && t.step === 'seed')
    const ratio =
      timing.step === 'import' && seed !== undefined
        ? (timing.seconds / seed.seconds).toFixed(2)
        : ''
    lines.push(
      `| ${timing.storage} | ${timing.step} | ${timing.seconds.toFixed(1)} | ${ratio} | ${timing.peakRssMiB} MiB |`,
    )
  }
  return lines.join('\n')
}

async function recreate(database: string): Promise<void> {
  await drop(database)
  await admin(`CREATE DATABASE ${database}`)
}

async function drop(database: string): Promise<void> {
  await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
}
