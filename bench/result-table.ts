/**
 * The targets, in the order they run: the limit, the peer on SQLite, the service on SQLite over
 * both transports, then the peer and the service (uws) on PostgreSQL.
 */
export const TARGETS = [
  'limit',
  'peer',
  'uws',
  'node',
  'pg-peer',
  'pg',
  'pg-redis',
  'pg-redis-2',
] as const

/** A target of the benchmark. */
export type TargetName = (typeof TARGETS)[number]

/** The figures of one scenario on one target. */
export interface Measurement {
  readonly scenario: string
  readonly target: TargetName
  readonly requestsPerSecond: number
  /**
   * Requests answered during the measurement. wrk's latencies are those of answered requests
   * only: when they are few, the ones still waiting at the end (the slowest) are missing from them.
   */
  readonly requests: number
  readonly p50Ms: number
  readonly p99Ms: number
  /** Responses with status 400 or more. */
  readonly non2xx: number
  /** Connect, read and write errors and timeouts seen by the load generator. */
  readonly socketErrors: number
  /** Peak resident set (VmHWM) of the server so far, in MiB, read right after the scenario. */
  readonly peakRssMb: number
  /** CPU time of the server process per request during the measurement, in microseconds. */
  readonly cpuUsPerRequest: number
  /**
   * The part of `cpuUsPerRequest` spent on the server's main thread (for the service, the event
   * loop), without its worker threads (the SQLite writer and checkpointer) and V8's helpers.
   * Absent from results written before 2026-11-25.
   */
  readonly mainThreadCpuUsPerRequest?: number
  /**
   * CPU time of the PostgreSQL backends serving the target's database per request, in
   * microseconds (user and system, from `/proc`): what the service's CPU leaves out. Absent for
   * the targets on SQLite, and from results written before 2026-12-05.
   */
  readonly pgCpuUsPerRequest?: number
  /** Share of the machine's CPU time the hypervisor gave to other tenants meanwhile, in %. */
  readonly stealPercent: number
  /** Measurements taken (more than one when steal went over the limit); this one had the least. */
  readonly attempts: number
  /** The round of the run it was taken in, from 1 (see `keepMedianRounds`). */
  readonly round: number
  /**
   * Each load of a scenario that sends two at once (mixed: its reads, then its writes), with
   * its own figures; the measurement's own req/s and CPU are those of every load together, its
   * latencies those of the first.
   */
  readonly loads?: readonly LoadFigures[]
}

/** The figures of one load of a scenario, as its own wrk process measured them. */
export interface LoadFigures {
  /** `reads` or `writes`. */
  readonly load: string
  readonly connections: number
  readonly requests: number
  readonly requestsPerSecond: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly non2xx: number
  readonly socketErrors: number
}

type Figure = 'requestsPerSecond' | 'p50Ms' | 'p99Ms' | 'cpuUsPerRequest'

/** Whether a target keeps its data in PostgreSQL. */
export function onPostgres(target: TargetName): boolean {
  return target.startsWith('pg')
}

/** The peer a target is compared with: the one on the same database. */
export function peerOf(target: TargetName): TargetName {
  return onPostgres(target) ? 'pg-peer' : 'peer'
}

/**
 * One Markdown table with every figure, and each figure as a ratio to the limit and to the peer
 * on the same database (`peerOf`) in the same scenario of the same run (`—` where that target did not run the scenario). For
 * req/s above 1 is better; for latencies and CPU per request below 1 is better.
 */
export function formatTable(measurements: readonly Measurement[]): string {
  const find = (scenario: string, target: TargetName) =>
    measurements.find((m) => m.scenario === scenario && m.target === target)
  const ratio = (m: Measurement, base: Measurement | undefined, figure: Figure) =>
    base === undefined || base[figure] === 0 ? '—' : `${(m[figure] / base[figure]).toFixed(2)}x`
  const header = [
    'scenario',
    'target',
    'req/s',
    'vs limit',
    'vs peer',
    'p50 ms',
    'vs limit',
    'vs peer',
    'p99 ms',
    'vs limit',
    'vs peer',
    'non-2xx',
    'socket errors',
    'peak RSS MiB',
    'CPU µs/req',
    'vs peer',
    'PG µs/req',
    'steal %',
  ]
  const rows = measurements.map((m) => {
    const limit = find(m.scenario, 'limit')
    const peer = find(m.scenario, peerOf(m.target))
    return [
      m.scenario,
      m.target,
      Math.round(m.requestsPerSecond).toLocaleString('en-US'),
      ratio(m, limit, 'requestsPerSecond'),
      ratio(m, peer, 'requestsPerSecond'),
      m.p50Ms.toFixed(2),
      ratio(m, limit, 'p50Ms'),
      ratio(m, peer, 'p50Ms'),
      m.p99Ms.toFixed(2),
      ratio(m, limit, 'p99Ms'),
      ratio(m, peer, 'p99Ms'),
      String(m.non2xx),
      String(m.socketErrors),
      m.peakRssMb.toFixed(0),
      m.cpuUsPerRequest.toFixed(1),
      ratio(m, peer, 'cpuUsPerRequest'),
      m.pgCpuUsPerRequest === undefined ? '—' : m.pgCpuUsPerRequest.toFixed(1),
      m.stealPercent.toFixed(1),
    ]
  })
  return markdownTable(header, rows, 2)
}

/** A Markdown table: the first `textColumns` columns left-aligned, the others (figures) right. */
export function markdownTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  textColumns: number,
): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]!.length)),
  )
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, column) => (column < textColumns ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join(' | ')} |`
  const rule = `|${widths.map((width, column) => (column < textColumns ? `${'-'.repeat(width + 1)}-` : `${'-'.repeat(width + 1)}:`)).join('|')}|`
  return [line(header), rule, ...rows.map(line)].join('\n')
}
