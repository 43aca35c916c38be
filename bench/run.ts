/**
 * `npm run bench`: the service against the limit and a typical peer, on this machine.
 *
 * Seeds (once) a database of 1,000,000 beneficiaries, then starts each target in turn pinned to
 * core 0 (the limit, the peer, the service over hyper-express, the service over node:http), and
 * loads it with wrk pinned to core 1, one scenario at a time for a fixed time. Prints one table,
 * with every figure as a ratio to the limit and to the peer of the same run, and writes it as
 * JSON to `bench/results/`. Every process it starts is stopped, also on error and on SIGINT.
 *
 * The whole sequence runs `--rounds` times, every target started afresh in each, and each target
 * and scenario keeps its median round (`keepMedianRounds`): a slow spell of the shared machine
 * falls on the targets of one round, and would otherwise decide a ratio between two targets
 * measured minutes apart. A measurement during which the hypervisor gave more than
 * `--max-steal` % of the machine's CPU time to other tenants is taken again, up to `--retries`
 * times, and the one with the least steal kept. Both choices look at the run, never at which
 * target wins, and every target gets the same.
 *
 * `--only bulk` times instead the CLI's `seed` and `import` of the same records on each storage,
 * with the exports between them (`bench/bulk.ts`).
 *
 * `--only shapes` measures instead each list shape class (`bench/list-shapes.ts`): requests
 * drawn from the seeded data's own names and dates by a generator seeded with `--seed`, written
 * to a file that wrk cycles through; `--only mixed` the reads of every kind with and without
 * creates and updates beside them on a second wrk process. Both run on the service only.
 *
 * Options: `--duration S` (5), `--rounds N` (3), `--warmup S` (2), `--connections N` (50),
 * `--rows N` (1,000,000), `--only get,list,…,shapes,mixed`,
 * `--targets limit,peer,uws,node,pg-peer,pg,pg-redis,pg-redis-2`, `--max-steal P` (2),
 * `--retries N` (2), `--seed N` (1), `--paths N` (30,000 generated paths per class).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { prepareData, type BenchData } from './bench-data.js'
import { runBulkBench } from './bulk.js'
import { readDataProfile, type DataProfile } from './data-profile.js'
import { ListShapes } from './list-shapes.js'
import { measure, warmUp, type NamedLoad } from './measure.js'
import { preparePgData, readPgDataProfile, type PgBenchData } from './pg-bench-data.js'
import { ProcessGroup } from './process-group.js'
import {
  TARGETS,
  formatTable,
  onPostgres,
  type Measurement,
  type TargetName,
} from './result-table.js'
import { keepMedianRounds } from './rounds.js'
import {
  MIXED_GROUP,
  selectScenarios,
  warmupSecondsOf,
  type Load,
  type Scenario,
  type ScenarioData,
} from './scenarios.js'
import { checkShapes } from './shape-checks.js'
import {
  formatMixedTable,
  formatShapeTable,
  isShape,
  rankShapes,
  summariseMixed,
} from './shape-report.js'
import { checkTargets, formatChecks } from './target-checks.js'
import { startTarget } from './targets.js'
import { ensureWrk } from './wrk-runner.js'

const SERVER_CORE = 0
const LOAD_CORE = 1
/** Paths of each set for the warm-ups. */
const WARMUP_PATHS = 5_000
/** Width of a scenario's name in the progress lines (`filter-status-date`). */
const NAME_WIDTH = 18

/** The paths of a warm-up and those of the measured run come from different seeds. */
type Phase = 'warmup' | 'measure'

const distRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const repoRoot = resolve(distRoot, '..')
const benchDir = join(repoRoot, 'bench')
const dataDir = join(benchDir, '.data')

const USAGE = `Usage: npm run bench -- [options]

  --targets LIST     limit,peer,uws,node,pg-peer,pg,pg-redis,pg-redis-2 (default: all)
  --only LIST        scenarios or groups: get,list,search,filter,deep,create,update,
                     shapes (every list shape class, or one: search-filtered, …),
                     mixed (reads-only, mixed, writes-only: reads with and without
                     writes, then the writes without reads),
                     bulk (alone: seed, export and import of --rows records on SQLite
                     and PostgreSQL, their times and peak RSS)
  --rounds N         whole sequences, each target and scenario keeping its median (3)
  --duration S       seconds measured per scenario (5); --warmup S before it (2; the mixed group 15)
  --connections N    wrk connections (50); --rows N seeded beneficiaries (1,000,000)
  --seed N           seed of the generated list paths (1); --paths N per set (30,000)
  --max-steal P      measure again above P % of stolen CPU (2), at most --retries N times (2)`

const { values } = parseOptions({
  options: {
    help: { type: 'boolean', short: 'h' },
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '50' },
    rows: { type: 'string', default: '1000000' },
    only: { type: 'string' },
    targets: { type: 'string', default: TARGETS.join(',') },
    'max-steal': { type: 'string', default: '2' },
    retries: { type: 'string', default: '2' },
    seed: { type: 'string', default: '1' },
    paths: { type: 'string', default: '30000' },
  },
})

if (values.help === true) {
  console.log(USAGE)
  process.exit(0)
}

const durationSeconds = wholeNumber('--duration', values.duration, 1, 600)
const rounds = wholeNumber('--rounds', values.rounds, 1, 9)
const warmupSeconds = wholeNumber('--warmup', values.warmup, 0, 60)
const connections = wholeNumber('--connections', values.connections, 1, 10_000)
const rows = wholeNumber('--rows', values.rows, 1_000, 100_000_000)
const maxStealPercent = wholeNumber('--max-steal', values['max-steal'], 0, 100)
const retries = wholeNumber('--retries', values.retries, 0, 5)
const seed = wholeNumber('--seed', values.seed, 0, 2 ** 31 - 1)
const pathsPerSet = wholeNumber('--paths', values.paths, 100, 1_000_000)
const bulk = values.only === 'bulk'
const scenarios = bulk ? [] : selectScenarios(values.only)
const targets = pick('--targets', values.targets, TARGETS) as TargetName[]

const group = new ProcessGroup()
/** Where the generated paths are, once written; deleted when the process exits, however. */
let pathsDir: string | undefined
process.on('exit', () => {
  group.killAllNow()
  if (pathsDir !== undefined) rmSync(pathsDir, { recursive: true, force: true })
})
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping every process the benchmark started`)
    void group.stopAll().finally(() => process.exit(130))
  })
}

try {
  await main()
} catch (error) {
  console.error(error instanceof Error ? error.message : error)
  process.exitCode = 1
} finally {
  await group.stopAll()
}

async function main(): Promise<void> {
  if (bulk) {
    await runBulkBench({
      group,
      distRoot,
      benchDir,
      rows,
      sqlite: !targets.every(onPostgres),
      postgres: targets.some(onPostgres),
    })
    return
  }
  ensureWrk()
  const where = { dataDir, distRoot, repoRoot }
  // A run on PostgreSQL alone seeds no SQLite database: at national scale that would be most of it.
  const data = targets.every(onPostgres) ? undefined : await prepareData(group, where, rows)
  const pgData = targets.some(onPostgres)
    ? await preparePgData(group, where, rows, targets.includes('pg-peer'))
    : undefined
  const scenarioData = (data ?? pgData)!
  console.log(
    `data: ${rows.toLocaleString('en-US')} rows, search "${scenarioData.searchPrefix}", ` +
      `filter ${scenarioData.createdFrom}..${scenarioData.createdTo}` +
      (data === undefined ? '' : `, detail ${data.detailBytes} bytes`),
  )
  const sets = [...new Set(scenarios.flatMap((s) => [s.paths, s.alongside?.paths]))].filter(
    (set) => set !== undefined,
  )
  if (sets.length > 0) {
    const profile =
      data === undefined
        ? await readPgDataProfile(dataDir, pgData!)
        : readDataProfile(data.serviceDb)
    pathsDir = writePaths(profile, sets)
  }
  console.log(
    `load: wrk, 1 thread, ${connections} connections, ${warmupSeconds} s warm-up + ` +
      `${durationSeconds} s per scenario; server on core ${SERVER_CORE}, wrk on core ${LOAD_CORE}\n`,
  )

  const taken: Measurement[] = []
  for (let round = 1; round <= rounds; round++) {
    if (rounds > 1) console.log(`round ${round} of ${rounds}`)
    taken.push(...(await runRound(data, pgData, scenarioData, round)))
  }
  const measurements = keepMedianRounds(taken)

  const date = new Date()
  const machine = {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    kernel: release(),
    node: process.version,
    // Other work on the machine skews absolute figures; the ratios inside one run much less.
    loadAverageAtEnd: loadavg().map((load) => Math.round(load * 100) / 100),
  }
  const checks = [...checkTargets(measurements), ...checkShapes(measurements, taken)]
  const fixed = measurements.filter((m) => !isShape(m) && !MIXED_GROUP.has(m.scenario))
  const shapes = rankShapes(measurements)
  const mixed = summariseMixed(measurements, taken)
  console.log(
    `\n${date.toISOString()} on ${machine.cpu} (${machine.cores} cores), node ${machine.node}, load average ${machine.loadAverageAtEnd.join(' ')}`,
  )
  console.log(
    `${rows.toLocaleString('en-US')} rows, ${connections} connections, ` +
      `${durationSeconds} s per scenario, the median of ${rounds} round${rounds === 1 ? '' : 's'}\n`,
  )
  if (fixed.length > 0) console.log(formatTable(fixed))
  if (shapes.length > 0) {
    console.log(`\nList shapes (seed ${seed}), worst p99 first:\n\n${formatShapeTable(shapes)}`)
  }
  if (mixed.length > 0) console.log(`\nMixed reads and writes:\n\n${formatMixedTable(mixed)}`)
  if (checks.length > 0) console.log(`\n${formatChecks(checks)}`)

  const resultsDir = join(benchDir, 'results')
  mkdirSync(resultsDir, { recursive: true })
  const file = join(
    resultsDir,
    `${date
      .toISOString()
      .replace(/:/g, '-')
      .replace(/\.\d+Z$/, 'Z')}.json`,
  )
  writeFileSync(
    file,
    `${JSON.stringify(
      {
        date: date.toISOString(),
        machine,
        options: {
          durationSeconds,
          rounds,
          warmupSeconds,
          connections,
          rows,
          targets,
          scenarios: scenarios.map((s) => s.name),
          maxStealPercent,
          retries,
          seed,
          pathsPerSet,
        },
        data: {
          rows,
          searchPrefix: scenarioData.searchPrefix,
          createdFrom: scenarioData.createdFrom,
          createdTo: scenarioData.createdTo,
          ...(data !== undefined && {
            detailBytes: data.detailBytes,
            peerSynchronous: data.peerSynchronous,
          }),
        },
        measurements,
        shapes,
        mixed,
        checks,
        rounds: taken,
      },
      null,
      2,
    )}\n`,
  )
  console.log(`\nwritten to ${file}`)
}

/** One round: every target in turn, started afresh, through every scenario that applies to it. */
async function runRound(
  data: BenchData | undefined,
  pgData: PgBenchData | undefined,
  scenarioData: ScenarioData,
  round: number,
): Promise<Measurement[]> {
  const measurements: Measurement[] = []
  for (const targetName of targets) {
    const applicable = scenarios.filter((s) => s.runsOn(targetName))
    if (applicable.length === 0) continue
    const target = await startTarget(targetName, {
      group,
      distRoot,
      repoRoot,
      dataDir,
      data,
      pgData,
      core: SERVER_CORE,
    })
    try {
      for (const scenario of applicable) {
        const loadsFor = (phase: Phase) => loadsOf(scenario, scenarioData, target, phase)
        await target.idle()
        const warmup = warmupSecondsOf(scenario, warmupSeconds)
        if (warmup > 0) await warmUp(group, loadsFor('warmup'), warmup)
        await target.idle()
        const label = `${targetName.padEnd(5)} ${scenario.name.padEnd(NAME_WIDTH)}`
        const take = (attempts: number) =>
          measure(
            group,
            target.pids,
            loadsFor('measure'),
            durationSeconds,
            { target: targetName, scenario: scenario.name, round, attempts },
            target.database,
          )
        let measurement = await take(1)
        for (
          let attempt = 2;
          attempt <= 1 + retries && measurement.stealPercent > maxStealPercent;
          attempt++
        ) {
          console.log(
            `${label} steal ${measurement.stealPercent.toFixed(1)} % > ${maxStealPercent} %: measuring again`,
          )
          await target.idle()
          const again = await take(attempt)
          measurement =
            again.stealPercent < measurement.stealPercent
              ? again
              : { ...measurement, attempts: attempt }
        }
        measurements.push(measurement)
        const loads = (measurement.loads ?? [])
          .map((l) => `  ${l.load} p50 ${l.p50Ms.toFixed(2)} p99 ${l.p99Ms.toFixed(2)} ms`)
          .join('')
        console.log(
          `${label} ${rounds > 1 ? `r${round} ` : ''}` +
            `${Math.round(measurement.requestsPerSecond).toLocaleString('en-US').padStart(8)} req/s  ` +
            `p50 ${measurement.p50Ms.toFixed(2)} ms  p99 ${measurement.p99Ms.toFixed(2)} ms  ` +
            `non-2xx ${measurement.non2xx}  CPU ${measurement.cpuUsPerRequest.toFixed(1)} µs/req ` +
            `(main thread ${(measurement.mainThreadCpuUsPerRequest ?? 0).toFixed(1)})  ` +
            (measurement.pgCpuUsPerRequest === undefined
              ? ''
              : `PostgreSQL ${measurement.pgCpuUsPerRequest.toFixed(1)} µs/req  `) +
            `steal ${measurement.stealPercent.toFixed(1)} %` +
            (measurement.attempts > 1 ? ` (least of ${measurement.attempts} attempts)` : '') +
            loads,
        )
      }
    } finally {
      await target.stop()
    }
  }

  return measurements
}

/** The wrk processes of a scenario on a target: its own load, and the one alongside if any. */
function loadsOf(
  scenario: Scenario,
  data: ScenarioData,
  target: { readonly baseUrl: string; readonly token: string | undefined },
  phase: Phase,
): NamedLoad[] {
  const run = (load: Load) => ({
    script: join(benchDir, 'wrk', `${load.script}.lua`),
    baseUrl: target.baseUrl,
    connections: load.connections?.(connections) ?? connections,
    core: LOAD_CORE,
    env: {
      BENCH_LUA_DIR: join(benchDir, 'wrk'),
      BENCH_TOKEN: target.token ?? '',
      ...(load.paths !== undefined && { BENCH_PATHS_FILE: pathsFile(load.paths, phase) }),
      ...load.env(data),
    },
  })
  const alongside = scenario.alongside
  return alongside === undefined
    ? [{ load: scenario.name, run: run(scenario) }]
    : [
        { load: 'reads', run: run(scenario) },
        { load: 'writes', run: run(alongside) },
      ]
}

/**
 * Writes the generated paths of every set the scenarios read to files in a temporary directory:
 * `--paths` of them for the measured runs, and others (another seed) for the warm-ups, so that
 * a measured run does not find the pages its warm-up has just read in memory.
 */
function writePaths(profile: DataProfile, sets: readonly string[]): string {
  const started = performance.now()
  const shapes = new ListShapes(profile)
  const dir = mkdtempSync(join(tmpdir(), 'bench-paths-'))
  const write = (file: string, paths: readonly string[]) =>
    writeFileSync(join(dir, file), `${paths.join('\n')}\n`)
  for (const set of sets) {
    write(`${set}.measure.txt`, shapes.paths(set, pathsPerSet, seed))
    write(`${set}.warmup.txt`, shapes.paths(set, WARMUP_PATHS, `${seed}:warmup`))
  }
  console.log(
    `paths: ${pathsPerSet.toLocaleString('en-US')} per set for ${sets.length} set(s), seed ${seed}, ` +
      `drawn from the data's names and dates in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  )
  return dir
}

function pathsFile(set: string, phase: Phase): string {
  if (pathsDir === undefined) throw new Error('the paths were not generated')
  return join(pathsDir, `${set}.${phase}.txt`)
}

/** `parseArgs`, with a line and the usage instead of a stack trace for an unknown option. */
function parseOptions<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config)
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`)
    process.exit(2)
  }
}

function wholeNumber(name: string, text: string, min: number, max: number): number {
  const value = Number(text)
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new TypeError(`${name} must be a whole number from ${min} to ${max}`)
  }
  return value
}

function pick(name: string, text: string | undefined, known: readonly string[]): string[] {
  if (text === undefined) return [...known]
  const names = text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0)
  const unknown = names.filter((part) => !known.includes(part))
  if (unknown.length > 0 || names.length === 0) {
    throw new TypeError(`${name}: one or more of ${known.join(', ')}`)
  }
  return known.filter((part) => names.includes(part))
}
