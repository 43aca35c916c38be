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
export type WrkScript = 'get-by-id' | 'list' | 'create' | 'update'

/** One load scenario: a Lua script and, for lists, the path with its query string. */
export interface Scenario {
  readonly name: string
  readonly description: string
  readonly script: WrkScript
  /** The environment of the script (`BENCH_PATH`, `BENCH_MAX_ID`). */
  env(data: ScenarioData): Record<string, string>
  /** Whether the scenario writes (the limit only answers reads of the detail route). */
  readonly writes: boolean
}

const list = (name: string, description: string, path: (data: ScenarioData) => string) =>
  ({
    name,
    description,
    script: 'list',
    writes: false,
    env: (data: ScenarioData) => ({ BENCH_PATH: path(data) }),
  }) satisfies Scenario

/** Every scenario, in the order they run against each target (reads first, then writes). */
export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'get',
    description: 'GET /v3/beneficiaries/{id}, uniformly random id',
    script: 'get-by-id',
    writes: false,
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
  {
    name: 'create',
    description: 'POST /v3/beneficiaries, fresh body and Idempotency-Key each time',
    script: 'create',
    writes: true,
    env: () => ({}),
  },
  {
    name: 'update',
    description: 'PUT /v3/beneficiaries/{id}, new phone for a random id',
    script: 'update',
    writes: true,
    env: (data) => ({ BENCH_MAX_ID: String(data.maxId) }),
  },
]
