import { DAY_MS } from '../core/time.js'
import { SHAPE_CLASSES } from './list-shapes.js'
import type { TargetName } from './result-table.js'

/** What the scenarios need to know about the seeded data. */
export interface ScenarioData {
  /** Highest id of the seeded rows: random ids are drawn from 1 to this. */
  readonly maxId: number
  /** A common surname prefix, lower case (for example `ros` for Rossi). */
  readonly searchPrefix: string
  /** `YYYY-MM-DD`, inclusive. */
  readonly createdFrom: string
  /** `YYYY-MM-DD`, inclusive. */
  readonly createdTo: string
}

/** The Lua scripts of `bench/wrk/`. */
export type WrkScript = 'get-by-id' | 'list' | 'create' | 'update' | 'paths' | 'writes'

/** The scenarios `--only` selects together by one name; none of them runs unless asked for. */
export type ScenarioGroup = 'shapes' | 'mixed'

/** What one wrk process sends. */
export interface Load {
  readonly script: WrkScript
  /** The environment of the script (`BENCH_PATH`, `BENCH_MAX_ID`). */
  env(data: ScenarioData): Record<string, string>
  /**
   * The set of generated paths `paths.lua` reads (`ListShapes#paths`): a shape class, or
   * `reads`; the run writes them to a file and passes it as `BENCH_PATHS_FILE`.
   */
  readonly paths?: string
  /** Its connections out of the run's `--connections`; all of them when absent. */
  connections?(total: number): number
}

/** One load scenario: a Lua script and, for lists, the path with its query string. */
export interface Scenario extends Load {
  readonly name: string
  readonly description: string
  /** Whether the scenario writes (the limit only answers reads of the detail route). */
  readonly writes: boolean
  readonly group?: ScenarioGroup
  /** Whether it runs on a target at all. */
  runsOn(target: TargetName): boolean
  /**
   * A second load sent at the same time by a second wrk process, and measured apart: the writes
   * of the mixed scenario beside its reads.
   */
  readonly alongside?: Load
  /**
   * Seconds of warm-up at least, whatever `--warmup` says (unless 0): for the mixed scenario,
   * the first that writes in a target's run, whose code V8 is still compiling seconds after
   * `--warmup`'s 2 s, and for the reads-only run set against it, whose code is compiled by the
   * shape classes when they ran before it, not when it runs first (`--only mixed`).
   */
  readonly warmupSeconds?: number
}

const notOnLimit = (target: TargetName) => target !== 'limit'
/**
 * The shapes and the mixed scenario run on the service only: the peer has no `sort`, and its
 * search is a `LIKE` on the raw names (no accent folding, no second word), so the same path
 * would not ask it the same question.
 */
const onService = (target: TargetName) =>
  target !== 'limit' && target !== 'peer' && target !== 'pg-peer'

/**
 * Writers of the mixed scenario: two in ten connections, at least one, so that writes are about
 * a tenth of the requests, as the mixed goal describes. Each connection sends its next request
 * when the last one is answered, and with requests served in the order they came
 * (`ServingQueue`) a write waits for its commit as well as for the requests before it: about
 * twice as long as a read (13 against 6 ms). So two in ten make writes 10.5–11.5 % of the
 * requests, where three in ten make them 17.5–24 %.
 */
const writers = (total: number) => Math.max(1, Math.round((total * 2) / 10))
/**
 * The warm-up of the mixed scenario and of its reads-only run. Measured with V8's `--trace-opt`
 * after the reads' warm-ups, the service compiled the write path and the copies' catch-ups for
 * about 15 s of writes (1.5 s of compiling in all), then under 30 ms a second; in the 5 s after a
 * 2 s warm-up, V8's helper threads took 0.40–0.47 s of the one core (8–9 %, taken from the reads
 * beside the writes), against 0.1 s after 12 s.
 */
const MIXED_WARMUP_SECONDS = 15
/** Readers of the mixed and the reads-only scenario: the others (all of them if only one). */
const readers = (total: number) => Math.max(1, total - writers(total))

const list = (name: string, description: string, path: (data: ScenarioData) => string) =>
  ({
    name,
    description,
    script: 'list',
    writes: false,
    runsOn: notOnLimit,
    env: (data: ScenarioData) => ({ BENCH_PATH: path(data) }),
  }) satisfies Scenario

const reads: Load = { script: 'paths', paths: 'reads', env: () => ({}), connections: readers }

/**
 * Every scenario, in the order they run against each target (reads first, then writes): the
 * fixed paths of the default run, the shape classes (`--only shapes`), and the reads with and
 * without writes beside them, then the same writes without reads (`--only mixed`). The writes
 * alone come after the mixed scenario, whose writes compiled their code in the same server: what
 * they cost with no read beside them is the least the mixed scenario's writes can take of the
 * core (`summariseMixed`).
 */
export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'get',
    description: 'GET /v3/beneficiaries/{id}, uniformly random id',
    script: 'get-by-id',
    writes: false,
    runsOn: () => true,
    env: (data) => ({ BENCH_MAX_ID: String(data.maxId) }),
  },
  list('list', 'GET /v3/beneficiaries (first page, 20 items)', () => '/v3/beneficiaries'),
  list(
    'search',
    'GET /v3/beneficiaries?search=<common surname prefix>',
    (data) => `/v3/beneficiaries?search=${encodeURIComponent(data.searchPrefix)}`,
  ),
  list(
    'filter',
    'GET /v3/beneficiaries?status=active&created_from&created_to (a 30-day range)',
    (data) =>
      `/v3/beneficiaries?status=active&created_from=${data.createdFrom}&created_to=${data.createdTo}`,
  ),
  list(
    'deep',
    'GET /v3/beneficiaries?page=40000&per_page=25',
    () => '/v3/beneficiaries?page=40000&per_page=25',
  ),
  ...SHAPE_CLASSES.map((shape): Scenario => ({
    name: shape.name,
    description: `list shape: ${shape.description}`,
    script: 'paths',
    paths: shape.name,
    writes: false,
    group: 'shapes',
    runsOn: onService,
    env: () => ({}),
  })),
  {
    ...reads,
    name: 'reads-only',
    description: 'the reads of mixed (gets and every list shape) on its read connections alone',
    writes: false,
    group: 'mixed',
    runsOn: onService,
    warmupSeconds: MIXED_WARMUP_SECONDS,
  },
  {
    ...reads,
    name: 'mixed',
    description: 'the same reads, with creates and updates in turn on 2 in 10 connections',
    writes: true,
    group: 'mixed',
    runsOn: onService,
    warmupSeconds: MIXED_WARMUP_SECONDS,
    alongside: {
      script: 'writes',
      env: (data) => ({ BENCH_MAX_ID: String(data.maxId) }),
      connections: writers,
    },
  },
  {
    name: 'writes-only',
    description: 'the writes of mixed on its write connections alone, no reads beside them',
    script: 'writes',
    writes: true,
    group: 'mixed',
    runsOn: onService,
    env: (data) => ({ BENCH_MAX_ID: String(data.maxId) }),
    connections: writers,
  },
  {
    name: 'create',
    description: 'POST /v3/beneficiaries, fresh body and Idempotency-Key each time',
    script: 'create',
    writes: true,
    runsOn: notOnLimit,
    env: () => ({}),
  },
  {
    name: 'update',
    description: 'PUT /v3/beneficiaries/{id}, new phone for a random id',
    script: 'update',
    writes: true,
    runsOn: notOnLimit,
    env: (data) => ({ BENCH_MAX_ID: String(data.maxId) }),
  },
]

/** The names of the mixed group's scenarios: reported in their own table, not the main one. */
export const MIXED_GROUP: ReadonlySet<string> = new Set(
  SCENARIOS.filter((s) => s.group === 'mixed').map((s) => s.name),
)

/**
 * The scenarios named by `--only` (scenario or group names, in the order they run), or, when it
 * is absent, every scenario outside a group.
 *
 * @throws TypeError naming the known names when one is unknown
 */
export function selectScenarios(only: string | undefined): Scenario[] {
  if (only === undefined) return SCENARIOS.filter((s) => s.group === undefined)
  const groups: readonly string[] = ['shapes', 'mixed'] satisfies ScenarioGroup[]
  const known = [...new Set([...SCENARIOS.map((s) => s.name), ...groups])]
  const names = only
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0)
  if (names.length === 0 || names.some((name) => !known.includes(name))) {
    throw new TypeError(`--only: one or more of ${known.join(', ')}`)
  }
  return SCENARIOS.filter(
    (s) => names.includes(s.name) || (s.group !== undefined && names.includes(s.group)),
  )
}

/** The seconds of warm-up before `scenario`: `asked` (`--warmup`), or its own if longer; none if 0. */
export function warmupSecondsOf(scenario: Scenario, asked: number): number {
  return asked === 0 ? 0 : Math.max(asked, scenario.warmupSeconds ?? 0)
}

/**
 * The search and the date range of the fixed scenarios, from the seeded data: the first three
 * letters of its commonest last name, and the 30 days that end at the middle day of its
 * creation times.
 */
export function searchAndMonth(
  commonLastName: string,
  firstCreated: number,
  lastCreated: number,
): Pick<ScenarioData, 'searchPrefix' | 'createdFrom' | 'createdTo'> {
  const middle = Math.floor((firstCreated + lastCreated) / 2 / DAY_MS) * DAY_MS
  return {
    searchPrefix: commonLastName
      .normalize('NFD')
      .replace(/[^\p{L}]/gu, '')
      .toLowerCase()
      .slice(0, 3),
    createdFrom: new Date(middle - 29 * DAY_MS).toISOString().slice(0, 10),
    createdTo: new Date(middle).toISOString().slice(0, 10),
  }
}
