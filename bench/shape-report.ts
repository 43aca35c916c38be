import { SHAPE_CLASSES } from './list-shapes.js'
import {
  markdownTable,
  type LoadFigures,
  type Measurement,
  type TargetName,
} from './result-table.js'

/** A shape class's figures on one target, with whether it is that target's worst. */
export interface RankedShape {
  readonly scenario: string
  readonly requestsPerSecond: number
  /** Requests answered: a few times the connections or fewer, and the p99 is a lower bound. */
  readonly requests: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly cpuUsPerRequest: number
  /** PostgreSQL's backends' CPU per request, on the targets on PostgreSQL. */
  readonly pgCpuUsPerRequest?: number
  readonly non2xx: number
  readonly socketErrors: number
  readonly stealPercent: number
  /** The highest p99 of the target's classes, or a class with no answer at all (the first). */
  readonly worstP99: boolean
  /**
   * The highest CPU per request of the target's classes (the service's and PostgreSQL's
   * together), or a class with no answer at all.
   */
  readonly worstCpu: boolean
}

/** The shape classes measured on one target, the worst p99 first (one never answered before all). */
export interface ShapeRanking {
  readonly target: TargetName
  readonly classes: readonly RankedShape[]
}

/** The mixed scenario on one target: its reads and writes apart, and the reads without writes. */
export interface MixedSummary {
  readonly target: TargetName
  readonly reads: LoadFigures
  readonly writes: LoadFigures
  /** Share of the requests that were writes, as achieved (wrk loops are closed: not set). */
  readonly writeShare: number
  /** Server CPU per request, reads and writes together. */
  readonly cpuUsPerRequest: number
  /**
   * Server CPU per write, counting what it made the reads beside it cost more (the mixed run's
   * CPU less its reads' cost in the reads-only run of the same round, per write; the median over
   * the rounds). On one core the reads wait for all of it: their turn grows by about
   * `writeShare × writeCostUs / (the reads' own CPU)`.
   */
  readonly writeCostUs?: number
  /** The part of `writeCostUs` on the server's main thread (the event loop). */
  readonly writeMainThreadCostUs?: number
  /** The same reads on the same connections without writes (`reads-only`), when it ran. */
  readonly readsOnly?: {
    readonly requests: number
    readonly requestsPerSecond: number
    readonly p50Ms: number
    readonly p99Ms: number
  }
  /**
   * The reads' p99 with writes over their p99 without, in the same round, the median over the
   * rounds (see `summariseMixed`); absent unless both had answers in some round.
   */
  readonly readsP99VsReadsOnly?: number
  /** That ratio in each round where both had answers, in the order the rounds ran. */
  readonly roundRatios?: readonly number[]
  /** The kept mixed round's reads' p99 over the kept reads-only round's, the figure before. */
  readonly readsP99VsMedianRounds?: number
  /** The same writes on the same connections without reads (`writes-only`), when it ran. */
  readonly writesAlone?: WritesAlone
}

/**
 * The mixed scenario's writes with no read beside them, and the least they take of the server's
 * core beside the reads: on one core, with wrk's closed loops, how much of the reads' slowdown
 * the writes' own work explains, before anything they make the reads cost more.
 */
export interface WritesAlone {
  readonly requests: number
  readonly requestsPerSecond: number
  readonly p50Ms: number
  readonly p99Ms: number
  /** Server CPU per write, the median over the rounds paired with a mixed run. */
  readonly cpuUsPerWrite: number
  /**
   * The share of the core the mixed run's writes take at the least: its writes per second, each
   * costing what a write costs alone, over a second of CPU; the median over the rounds.
   */
  readonly coreShare: number
  /**
   * The least the reads' mean latency grows by beside those writes: `busy / (1 − coreShare)`,
   * where `busy` is the core's busy share in the reads-only run of the same round; the median
   * over the rounds. Each of the reads' connections waits for its answer before it sends again,
   * so their mean latency is the connections over their rate (Little's law), and their rate is
   * at most the core left to them over what a read costs alone.
   */
  readonly readsMeanLatencyFloor: number
}

const SHAPE_NAMES = new Set(SHAPE_CLASSES.map((shape) => shape.name))

/** Whether a measurement is of a list shape class. */
export function isShape(m: Measurement): boolean {
  return SHAPE_NAMES.has(m.scenario)
}

/** Every target's shape classes, worst p99 first, the worst CPU per request marked. */
export function rankShapes(measurements: readonly Measurement[]): ShapeRanking[] {
  const targets = [...new Set(measurements.filter(isShape).map((m) => m.target))]
  return targets.map((target) => {
    const own = measurements.filter((m) => m.target === target && isShape(m))
    const ranked = [...own].sort((a, b) => worseness(b, 'p99Ms') - worseness(a, 'p99Ms'))
    const worstCpu = Math.max(...own.map((m) => worseness(m, 'cpuUsPerRequest')))
    return {
      target,
      classes: ranked.map((m, i) => ({
        scenario: m.scenario,
        requestsPerSecond: m.requestsPerSecond,
        requests: m.requests,
        p50Ms: m.p50Ms,
        p99Ms: m.p99Ms,
        cpuUsPerRequest: m.cpuUsPerRequest,
        ...(m.pgCpuUsPerRequest !== undefined && { pgCpuUsPerRequest: m.pgCpuUsPerRequest }),
        non2xx: m.non2xx,
        socketErrors: m.socketErrors,
        stealPercent: m.stealPercent,
        worstP99: i === 0,
        worstCpu: worseness(m, 'cpuUsPerRequest') === worstCpu,
      })),
    }
  })
}

/**
 * A class none of whose requests was answered in time is the worst of all, in both figures; the
 * CPU counts PostgreSQL's beside the service's.
 */
function worseness(m: Measurement, figure: 'p99Ms' | 'cpuUsPerRequest'): number {
  if (m.requests === 0) return Infinity
  return figure === 'p99Ms' ? m.p99Ms : m.cpuUsPerRequest + (m.pgCpuUsPerRequest ?? 0)
}

/** A figure of answered requests, or `—` when there was none. */
function figure(requests: number, value: number, digits: number): string {
  return requests === 0 ? '—' : value.toFixed(digits)
}

/**
 * The mixed scenario of every target that ran it, with its reads-only run beside it.
 * `measurements` are the kept ones (`keepMedianRounds`); `rounds`, every round's, pair each
 * mixed run with the reads-only run of its own round. The ratio of the goal is the median of
 * those paired ratios: the two runs of a round follow one another on the same server, and the
 * machine's speed, which drifts by a third from one round to another, divides out of their
 * ratio, where the kept runs of the two scenarios may come from different rounds (one run had a
 * reads-only round at p99 26 ms and the next two at 17: 1.87x between the kept rounds, 1.20x,
 * 1.49x and 1.11x round by round).
 */
export function summariseMixed(
  measurements: readonly Measurement[],
  rounds: readonly Measurement[] = measurements,
): MixedSummary[] {
  return measurements.flatMap((m): MixedSummary[] => {
    if (m.scenario !== 'mixed' || m.loads === undefined) return []
    const [reads, writes] = m.loads
    if (reads === undefined || writes === undefined) return []
    const alone = measurements.find((o) => o.scenario === 'reads-only' && o.target === m.target)
    const keptRatio =
      alone !== undefined && alone.requests > 0 && reads.requests > 0
        ? reads.p99Ms / alone.p99Ms
        : undefined
    const roundRatios = pairedRatios(rounds, m.target)
    const ratio = roundRatios.length > 0 ? median(roundRatios) : keptRatio
    const writeCost = pairedWriteCosts(rounds, m.target)
    const writesAlone = writesAloneOf(measurements, rounds, m.target)
    return [
      {
        target: m.target,
        reads,
        writes,
        writeShare: writes.requests / Math.max(1, reads.requests + writes.requests),
        cpuUsPerRequest: m.cpuUsPerRequest,
        ...(writeCost !== undefined && { writeCostUs: writeCost.total }),
        ...(writeCost?.main !== undefined && { writeMainThreadCostUs: writeCost.main }),
        ...(alone !== undefined && {
          readsOnly: {
            requests: alone.requests,
            requestsPerSecond: alone.requestsPerSecond,
            p50Ms: alone.p50Ms,
            p99Ms: alone.p99Ms,
          },
        }),
        ...(ratio !== undefined && { readsP99VsReadsOnly: ratio }),
        ...(roundRatios.length > 0 && { roundRatios }),
        ...(keptRatio !== undefined && { readsP99VsMedianRounds: keptRatio }),
        ...(writesAlone !== undefined && { writesAlone }),
      },
    ]
  })
}

/** Round by round, the mixed run of `target` and the reads-only run of the same round. */
function roundPairs(
  rounds: readonly Measurement[],
  target: TargetName,
): { mixed: Measurement; reads: LoadFigures; writes: LoadFigures; alone: Measurement }[] {
  return rounds
    .filter((r) => r.target === target && r.scenario === 'mixed')
    .sort((a, b) => a.round - b.round)
    .flatMap((mixed) => {
      const [reads, writes] = mixed.loads ?? []
      const alone = rounds.find(
        (r) => r.target === target && r.scenario === 'reads-only' && r.round === mixed.round,
      )
      if (reads === undefined || writes === undefined || alone === undefined) return []
      if (reads.requests === 0 || alone.requests === 0) return []
      return [{ mixed, reads, writes, alone }]
    })
}

/** Round by round, the mixed reads' p99 over the reads-only p99 of `target`, where both answered. */
function pairedRatios(rounds: readonly Measurement[], target: TargetName): number[] {
  return roundPairs(rounds, target).map(({ reads, alone }) => reads.p99Ms / alone.p99Ms)
}

/**
 * What a write of the mixed scenario costs the server, in µs of CPU, the median over the rounds:
 * the CPU of the mixed run less what its reads cost in the reads-only run of the same round, per
 * write. It counts the write's own work (on the event loop and the writer's threads) and what it
 * made the reads beside it cost more; on one core, reads wait for all of it. `main`, the same on
 * the main thread alone (absent from results written before the main thread was measured).
 */
function pairedWriteCosts(
  rounds: readonly Measurement[],
  target: TargetName,
): { total: number; main: number | undefined } | undefined {
  const pairs = roundPairs(rounds, target).filter(({ writes }) => writes.requests > 0)
  if (pairs.length === 0) return undefined
  const cost = (figure: 'cpuUsPerRequest' | 'mainThreadCpuUsPerRequest') =>
    median(
      pairs.map(
        ({ mixed, reads, writes, alone }) =>
          ((mixed[figure] ?? 0) * (reads.requests + writes.requests) -
            (alone[figure] ?? 0) * reads.requests) /
          writes.requests,
      ),
    )
  const measuredMain = pairs.every(
    ({ mixed, alone }) =>
      mixed.mainThreadCpuUsPerRequest !== undefined &&
      alone.mainThreadCpuUsPerRequest !== undefined,
  )
  return {
    total: cost('cpuUsPerRequest'),
    main: measuredMain ? cost('mainThreadCpuUsPerRequest') : undefined,
  }
}

/**
 * The writes-only run of `target` (the kept one), with what its writes cost and, round by round
 * beside the mixed and reads-only runs of the same round, the least share of the core the mixed
 * run's writes took and the least its reads' mean latency grew by; the medians of the rounds.
 */
function writesAloneOf(
  measurements: readonly Measurement[],
  rounds: readonly Measurement[],
  target: TargetName,
): WritesAlone | undefined {
  const kept = measurements.find((o) => o.scenario === 'writes-only' && o.target === target)
  if (kept === undefined || kept.requests === 0) return undefined
  const floors = roundPairs(rounds, target).flatMap(({ mixed, writes, alone }) => {
    const own = rounds.find(
      (r) =>
        r.target === target &&
        r.scenario === 'writes-only' &&
        r.round === mixed.round &&
        r.requests > 0,
    )
    if (own === undefined) return []
    const cpu = own.cpuUsPerRequest
    const coreShare = Math.min(1, (writes.requestsPerSecond * cpu) / 1e6)
    const busy = Math.min(1, (alone.requestsPerSecond * alone.cpuUsPerRequest) / 1e6)
    return [{ cpu, coreShare, latency: coreShare < 1 ? busy / (1 - coreShare) : Infinity }]
  })
  if (floors.length === 0) return undefined
  return {
    requests: kept.requests,
    requestsPerSecond: kept.requestsPerSecond,
    p50Ms: kept.p50Ms,
    p99Ms: kept.p99Ms,
    cpuUsPerWrite: median(floors.map((f) => f.cpu)),
    coreShare: median(floors.map((f) => f.coreShare)),
    readsMeanLatencyFloor: median(floors.map((f) => f.latency)),
  }
}

/** The median of `values` (not empty): of an even number, the mean of the two middle ones. */
function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/** The shape classes as a Markdown table: per target, the worst p99 first. */
export function formatShapeTable(rankings: readonly ShapeRanking[]): string {
  const header = [
    'target',
    'shape class',
    'req/s',
    'requests',
    'p50 ms',
    'p99 ms',
    'CPU µs/req',
    'PG µs/req',
    'non-2xx',
    'socket errors',
    'steal %',
    'worst',
  ]
  const rows = rankings.flatMap(({ target, classes }) =>
    classes.map((c) => [
      target,
      c.scenario,
      Math.round(c.requestsPerSecond).toLocaleString('en-US'),
      c.requests.toLocaleString('en-US'),
      figure(c.requests, c.p50Ms, 2),
      figure(c.requests, c.p99Ms, 2),
      figure(c.requests, c.cpuUsPerRequest, 1),
      c.pgCpuUsPerRequest === undefined ? '—' : figure(c.requests, c.pgCpuUsPerRequest, 1),
      String(c.non2xx),
      String(c.socketErrors),
      c.stealPercent.toFixed(1),
      [c.worstP99 && 'p99', c.worstCpu && 'CPU'].filter(Boolean).join(', '),
    ]),
  )
  return markdownTable(header, rows, 2)
}

/**
 * The mixed scenario as a Markdown table: reads with writes, writes, reads without writes, and
 * writes without reads (a run alone has no share of the mixed run's requests).
 */
export function formatMixedTable(summaries: readonly MixedSummary[]): string {
  const header = ['target', 'load', 'connections', 'requests', 'share', 'req/s', 'p50 ms', 'p99 ms']
  type Figures = Pick<LoadFigures, 'requests' | 'requestsPerSecond' | 'p50Ms' | 'p99Ms'>
  const rows = summaries.flatMap((s) => {
    const total = s.reads.requests + s.writes.requests
    const row = (label: string, connections: number, f: Figures, share: boolean) => [
      s.target,
      label,
      String(connections),
      f.requests.toLocaleString('en-US'),
      share ? `${((100 * f.requests) / Math.max(1, total)).toFixed(1)} %` : '',
      Math.round(f.requestsPerSecond).toLocaleString('en-US'),
      figure(f.requests, f.p50Ms, 2),
      figure(f.requests, f.p99Ms, 2),
    ]
    const alone = (label: string, connections: number, f: Figures | undefined) =>
      f === undefined ? [] : [row(label, connections, f, false)]
    return [
      row('reads, with writes', s.reads.connections, s.reads, true),
      row('writes (create, update)', s.writes.connections, s.writes, true),
      ...alone('reads, without writes', s.reads.connections, s.readsOnly),
      ...alone('writes, without reads', s.writes.connections, s.writesAlone),
    ]
  })
  const notes = summaries.map(
    (s) =>
      `${s.target}: CPU ${s.cpuUsPerRequest.toFixed(1)} µs/req, reads and writes together` +
      (s.writeCostUs === undefined
        ? ''
        : `; a write costs ${s.writeCostUs.toFixed(0)} µs of CPU` +
          (s.writeMainThreadCostUs === undefined
            ? ''
            : ` (${s.writeMainThreadCostUs.toFixed(0)} on the event loop)`) +
          ', counting the reads it made dearer') +
      (s.readsP99VsReadsOnly === undefined
        ? ''
        : `; reads' p99 with writes ${s.readsP99VsReadsOnly.toFixed(2)}x their p99 without` +
          (s.roundRatios === undefined || s.roundRatios.length < 2
            ? ''
            : ` in the same round (median of ${s.roundRatios.map((r) => `${r.toFixed(2)}x`).join(', ')}` +
              (s.readsP99VsMedianRounds === undefined
                ? ')'
                : `; ${s.readsP99VsMedianRounds.toFixed(2)}x between the kept rounds)`))) +
      (s.writesAlone === undefined
        ? ''
        : `; alone, a write costs ${s.writesAlone.cpuUsPerWrite.toFixed(0)} µs: the mixed run's ` +
          `writes took at least ${(100 * s.writesAlone.coreShare).toFixed(1)} % of the core, and ` +
          `the reads' mean latency beside them is at least ` +
          `${s.writesAlone.readsMeanLatencyFloor.toFixed(2)}x their mean without (one core)`),
  )
  return [markdownTable(header, rows, 2), '', ...notes].join('\n')
}
