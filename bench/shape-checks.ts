import type { Measurement } from './result-table.js'
import { rankShapes, summariseMixed } from './shape-report.js'
import type { Check } from './target-checks.js'

const SHAPE_P99_MS = 20
const SHAPE_CPU_US = 400
/** The national-scale goals on PostgreSQL: CPU counts the service's and PostgreSQL's. */
const PG_SHAPE_P99_MS = 100
const PG_SHAPE_CPU_US = 2_000
const UPDATE_P99_MS = 30
const MIXED_READS_P99_MS = 20
const MIXED_READS_VS_ALONE = 1.5
/** The least share of the mixed scenario's requests that are writes for it to count as one. */
const MIXED_WRITE_SHARE = 0.09

/** A measurement of the service on SQLite, over either transport. */
const isOnSqlite = (m: Measurement): boolean => m.target === 'uws' || m.target === 'node'

/**
 * The list-shape and mixed goals for the service on SQLite (`uws`, `node`), those of its figures this run
 * measured: every list shape class p99 < 20 ms, the worst class's CPU ≤ 400 µs per request;
 * update p99 < 30 ms; in the mixed scenario the reads' p99 < 20 ms and at most 1.5x their p99
 * without writes (in the same round, the median over the rounds: `summariseMixed`), writes being
 * about a tenth of its requests (9 % at least). `measurements` are the kept ones, `rounds` every
 * round's.
 */
export function checkShapes(
  measurements: readonly Measurement[],
  rounds: readonly Measurement[] = measurements,
): Check[] {
  const onSqlite = measurements.filter(isOnSqlite)
  const checks: Check[] = []
  checks.push(...shapeGoals(onSqlite, SHAPE_P99_MS, SHAPE_CPU_US, ''))
  for (const m of onSqlite.filter((o) => o.scenario === 'update')) {
    checks.push({
      target: m.target,
      goal: `update: p99 < ${UPDATE_P99_MS} ms`,
      actual: `p99 ${m.p99Ms.toFixed(2)} ms`,
      met: m.p99Ms < UPDATE_P99_MS,
    })
  }
  const onPostgres = measurements.filter((m) => m.target === 'pg')
  checks.push(...shapeGoals(onPostgres, PG_SHAPE_P99_MS, PG_SHAPE_CPU_US, 'service + PostgreSQL '))
  for (const s of summariseMixed(onSqlite, rounds.filter(isOnSqlite))) {
    checks.push({
      target: s.target,
      goal: `mixed: writes >= ${MIXED_WRITE_SHARE * 100} % of requests`,
      actual: `${(s.writeShare * 100).toFixed(1)} % (${s.writes.requests} of ${s.reads.requests + s.writes.requests})`,
      met: s.writeShare >= MIXED_WRITE_SHARE,
    })
    checks.push({
      target: s.target,
      goal: `mixed: reads p99 < ${MIXED_READS_P99_MS} ms`,
      actual:
        s.reads.requests === 0
          ? 'no read answered'
          : `p99 ${s.reads.p99Ms.toFixed(2)} ms, writes p99 ${s.writes.p99Ms.toFixed(2)} ms`,
      met: s.reads.requests > 0 && s.reads.p99Ms < MIXED_READS_P99_MS,
    })
    const ratio = s.readsP99VsReadsOnly
    const unanswered = s.reads.requests === 0 || s.readsOnly?.requests === 0
    checks.push({
      target: s.target,
      goal: `mixed: reads p99 <= ${MIXED_READS_VS_ALONE}x without writes`,
      actual:
        ratio !== undefined
          ? `${ratio.toFixed(2)}x${s.roundRatios !== undefined && s.roundRatios.length > 1 ? ' (median of the rounds)' : ''}`
          : unanswered
            ? 'no read answered'
            : 'reads-only not run',
      // Reads that got no answer with writes miss the goal; without a reads-only figure, n/a.
      met:
        ratio !== undefined
          ? ratio <= MIXED_READS_VS_ALONE
          : s.reads.requests === 0
            ? false
            : undefined,
    })
  }
  return checks
}

/**
 * Per target, the p99 of its worst shape class against `p99Ms` and the CPU per request of its
 * costliest against `cpuUs`: the service's, plus PostgreSQL's where the measurement has it.
 */
function shapeGoals(
  measurements: readonly Measurement[],
  p99Ms: number,
  cpuUs: number,
  whose: string,
): Check[] {
  return rankShapes(measurements).flatMap(({ target, classes }) => {
    const worst = classes[0]!
    const costly = classes.find((c) => c.worstCpu)!
    const cpu = costly.cpuUsPerRequest + (costly.pgCpuUsPerRequest ?? 0)
    return [
      {
        target,
        goal: `every list shape: p99 < ${p99Ms} ms`,
        actual:
          worst.requests === 0
            ? `${worst.scenario}: no request answered`
            : `worst ${worst.scenario}, p99 ${worst.p99Ms.toFixed(2)} ms`,
        met: worst.requests > 0 && worst.p99Ms < p99Ms,
      },
      {
        target,
        goal: `list shapes: worst ${whose}CPU <= ${cpuUs} µs/req`,
        actual:
          costly.requests === 0
            ? `${costly.scenario}: no request answered`
            : `${costly.scenario}, ${cpu.toFixed(1)} µs/req`,
        met: costly.requests > 0 && cpu <= cpuUs,
      },
    ]
  })
}
