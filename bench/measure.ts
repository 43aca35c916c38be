import type { ProcessGroup } from './process-group.js'
import type { LoadFigures, Measurement, TargetName } from './result-table.js'
import { machineCpuTicks, mainThreadCpuMs, peakRssMb, processCpuMs } from './targets.js'
import { backendCpuMs, type BackendCpu } from './pg-bench-data.js'
import { runWrk, type WrkResult, type WrkRun } from './wrk-runner.js'

/** One wrk process of a measurement: `reads`, `writes`, or the scenario's only load. */
export interface NamedLoad {
  readonly load: string
  readonly run: Omit<WrkRun, 'durationSeconds'>
}

/** What a measurement is of. */
export interface MeasurementOf {
  readonly target: TargetName
  readonly scenario: string
  readonly round: number
  readonly attempts: number
}

/** Runs every load at once for `durationSeconds`: the warm-up, unmeasured. */
export async function warmUp(
  group: ProcessGroup,
  loads: readonly NamedLoad[],
  durationSeconds: number,
): Promise<void> {
  await Promise.all(loads.map(({ run }) => runWrk(group, { ...run, durationSeconds })))
}

/**
 * One measurement of a scenario on a running target: every load at once (one wrk process each)
 * for the duration, with the server's CPU time per request of all of them together (and of its
 * main threads alone) and the machine's steal meanwhile. With more than one load, each keeps its
 * own figures (`loads`) and the measurement's latencies are those of the first.
 */
export async function measure(
  group: ProcessGroup,
  pids: readonly (number | undefined)[],
  loads: readonly NamedLoad[],
  durationSeconds: number,
  of: MeasurementOf,
  database?: string,
): Promise<Measurement> {
  const cpuOf = () => pids.reduce<number>((sum, pid) => sum + processCpuMs(pid), 0)
  const mainOf = () => pids.reduce<number>((sum, pid) => sum + mainThreadCpuMs(pid), 0)
  const cpuBefore = cpuOf()
  const mainBefore = mainOf()
  const machineBefore = machineCpuTicks()
  const pgBefore: BackendCpu | undefined =
    database === undefined ? undefined : await backendCpuMs(database)
  const results = await Promise.all(
    loads.map(({ run }) => runWrk(group, { ...run, durationSeconds })),
  )
  const cpuMs = cpuOf() - cpuBefore
  const mainMs = mainOf() - mainBefore
  const machineAfter = machineCpuTicks()
  const pgMs =
    pgBefore === undefined || database === undefined
      ? undefined
      : spentSince(pgBefore, await backendCpuMs(database))
  const machineTicks = machineAfter.total - machineBefore.total
  const figures = results.map((result, i) => figuresOf(loads[i]!, result))
  const requests = figures.reduce((sum, f) => sum + f.requests, 0)
  const first = figures[0]!
  return {
    scenario: of.scenario,
    target: of.target,
    requestsPerSecond: figures.reduce((sum, f) => sum + f.requestsPerSecond, 0),
    requests,
    p50Ms: first.p50Ms,
    p99Ms: first.p99Ms,
    non2xx: figures.reduce((sum, f) => sum + f.non2xx, 0),
    socketErrors: figures.reduce((sum, f) => sum + f.socketErrors, 0),
    peakRssMb: pids.reduce<number>((sum, pid) => sum + peakRssMb(pid), 0),
    cpuUsPerRequest: requests === 0 ? 0 : (cpuMs * 1000) / requests,
    mainThreadCpuUsPerRequest: requests === 0 ? 0 : (mainMs * 1000) / requests,
    ...(pgMs !== undefined && {
      pgCpuUsPerRequest: requests === 0 ? 0 : (pgMs * 1000) / requests,
    }),
    stealPercent:
      machineTicks <= 0 ? 0 : ((machineAfter.steal - machineBefore.steal) * 100) / machineTicks,
    attempts: of.attempts,
    round: of.round,
    ...(loads.length > 1 && { loads: figures }),
  }
}

/**
 * CPU the backends spent between two readings: a backend that started meanwhile counts whole,
 * one that ended meanwhile loses what it spent after the first reading (the pools keep theirs).
 */
function spentSince(before: BackendCpu, after: BackendCpu): number {
  let spent = 0
  for (const [pid, ms] of after) spent += ms - (before.get(pid) ?? 0)
  return spent
}

function figuresOf(load: NamedLoad, result: WrkResult): LoadFigures {
  return {
    load: load.load,
    connections: load.run.connections,
    requests: result.requests,
    requestsPerSecond: result.requests / (result.duration_us / 1e6),
    p50Ms: result.p50_us / 1000,
    p99Ms: result.p99_us / 1000,
    non2xx: result.non2xx,
    socketErrors:
      result.connect_errors + result.read_errors + result.write_errors + result.timeouts,
  }
}
