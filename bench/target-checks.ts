import { peerOf, type Measurement, type TargetName } from './result-table.js'

/** One goal of the benchmark, judged on one run. */
export interface Check {
  readonly target: TargetName
  readonly goal: string
  readonly actual: string
  /** `undefined` when a figure the goal needs was not measured in this run. */
  readonly met: boolean | undefined
}

const LIST_SCENARIOS = ['list', 'search', 'filter', 'deep']
const WRITE_SCENARIOS = ['create', 'update']
const RSS_LIMIT_MB = 300

/**
 * The service's goals on SQLite, for each transport: get by id at least 40 % of the limit and
 * 5x the peer; every list scenario 5x the peer with p99 under 20 ms; create and update 1.5x the
 * peer's create; peak resident set under 300 MB.
 */
export function checkTargets(measurements: readonly Measurement[]): Check[] {
  const find = (scenario: string, target: TargetName) =>
    measurements.find((m) => m.scenario === scenario && m.target === target)
  const times = (value: number, base: number | undefined) =>
    base === undefined ? undefined : value / base
  const checks: Check[] = []
  for (const target of ['uws', 'node'] as const) {
    const get = find('get', target)
    if (get === undefined && !measurements.some((m) => m.target === target)) continue
    if (get !== undefined) {
      const vsLimit = times(get.requestsPerSecond, find('get', 'limit')?.requestsPerSecond)
      const vsPeer = times(get.requestsPerSecond, find('get', 'peer')?.requestsPerSecond)
      checks.push({
        target,
        goal: 'get: >= 0.40x the limit',
        actual: vsLimit === undefined ? 'limit not run' : `${vsLimit.toFixed(2)}x`,
        met: vsLimit === undefined ? undefined : vsLimit >= 0.4,
      })
      checks.push({
        target,
        goal: 'get: >= 5x the peer',
        actual: vsPeer === undefined ? 'peer not run' : `${vsPeer.toFixed(2)}x`,
        met: vsPeer === undefined ? undefined : vsPeer >= 5,
      })
    }
    for (const scenario of LIST_SCENARIOS) {
      const m = find(scenario, target)
      if (m === undefined) continue
      const vsPeer = times(m.requestsPerSecond, find(scenario, 'peer')?.requestsPerSecond)
      checks.push({
        target,
        goal: `${scenario}: >= 5x the peer, p99 < 20 ms`,
        actual: `${vsPeer === undefined ? 'peer not run' : `${vsPeer.toFixed(2)}x`}, p99 ${m.p99Ms.toFixed(2)} ms`,
        met: vsPeer === undefined ? undefined : vsPeer >= 5 && m.p99Ms < 20,
      })
    }
    const peerCreate = find('create', 'peer')?.requestsPerSecond
    for (const scenario of WRITE_SCENARIOS) {
      const m = find(scenario, target)
      if (m === undefined) continue
      const vsPeer = times(m.requestsPerSecond, peerCreate)
      checks.push({
        target,
        goal: `${scenario}: >= 1.5x the peer's create`,
        actual: vsPeer === undefined ? 'peer create not run' : `${vsPeer.toFixed(2)}x`,
        met: vsPeer === undefined ? undefined : vsPeer >= 1.5,
      })
    }
    const peak = Math.max(
      0,
      ...measurements.filter((m) => m.target === target).map((m) => m.peakRssMb),
    )
    if (peak > 0) {
      checks.push({
        target,
        goal: `peak RSS < ${RSS_LIMIT_MB} MB over the run`,
        actual: `${peak.toFixed(0)} MiB`,
        met: peak * 1.048576 < RSS_LIMIT_MB,
      })
    }
  }
  checks.push(...checkPostgres(measurements))
  checks.push(...sharedLimiterCost(measurements))
  return checks
}

/**
 * What the shared limiter costs: the service on PostgreSQL with its limits on Redis
 * (`pg-redis`, one Redis round trip per limited request) against the same service with limits
 * in process (`pg`), in CPU per request and req/s, scenario by scenario; and two instances
 * behind HAProxy (`pg-redis-2`) against one. Figures, not goals.
 */
function sharedLimiterCost(measurements: readonly Measurement[]): Check[] {
  const find = (scenario: string, name: TargetName) =>
    measurements.find((m) => m.scenario === scenario && m.target === name)
  const checks: Check[] = []
  for (const m of measurements) {
    if (m.target !== 'pg-redis' && m.target !== 'pg-redis-2') continue
    const base = find(m.scenario, m.target === 'pg-redis' ? 'pg' : 'pg-redis')
    if (base === undefined) continue
    const cpu = m.cpuUsPerRequest - base.cpuUsPerRequest
    checks.push({
      target: m.target,
      goal: `${m.scenario}: against ${base.target}`,
      actual: `${(m.requestsPerSecond / base.requestsPerSecond).toFixed(2)}x req/s, CPU ${cpu >= 0 ? '+' : ''}${cpu.toFixed(1)} µs/req`,
      met: undefined,
    })
  }
  return checks
}

/**
 * The service's goals on PostgreSQL, against the peer on PostgreSQL: every list scenario 50x
 * with p99 under 50 ms, get 2x, create 1.2x.
 */
function checkPostgres(measurements: readonly Measurement[]): Check[] {
  const target = 'pg'
  const peer = peerOf(target)
  const find = (scenario: string, name: TargetName) =>
    measurements.find((m) => m.scenario === scenario && m.target === name)
  const checks: Check[] = []
  const ratio = (scenario: string, goal: string, atLeast: number, p99Below?: number) => {
    const m = find(scenario, target)
    if (m === undefined) return
    const base = find(scenario, peer)?.requestsPerSecond
    const times = base === undefined ? undefined : m.requestsPerSecond / base
    const p99 = p99Below === undefined ? '' : `, p99 ${m.p99Ms.toFixed(2)} ms`
    checks.push({
      target,
      goal,
      actual: `${times === undefined ? 'pg-peer not run' : `${times.toFixed(2)}x`}${p99}`,
      met:
        times === undefined
          ? undefined
          : times >= atLeast && (p99Below === undefined || m.p99Ms < p99Below),
    })
  }
  ratio('get', 'get: >= 2x the pg-peer', 2)
  for (const scenario of LIST_SCENARIOS) {
    ratio(scenario, `${scenario}: >= 50x the pg-peer, p99 < 50 ms`, 50, 50)
  }
  ratio('create', 'create: >= 1.2x the pg-peer', 1.2)
  return checks
}

/** The checks as lines of text. */
export function formatChecks(checks: readonly Check[]): string {
  return checks
    .map((check) => {
      const mark = check.met === undefined ? 'n/a ' : check.met ? 'MET ' : 'MISS'
      return `${mark}  ${check.target.padEnd(4)}  ${check.goal.padEnd(40)}  ${check.actual}`
    })
    .join('\n')
}
