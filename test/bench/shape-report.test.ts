import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { LoadFigures, Measurement } from '../../bench/result-table.js'
import { checkShapes } from '../../bench/shape-checks.js'
import {
  formatMixedTable,
  formatShapeTable,
  rankShapes,
  summariseMixed,
} from '../../bench/shape-report.js'

function measurement(
  scenario: string,
  p99Ms: number,
  cpuUsPerRequest: number,
  extra: Partial<Measurement> = {},
): Measurement {
  return {
    scenario,
    target: 'uws',
    requestsPerSecond: 1000,
    requests: 5000,
    p50Ms: p99Ms / 4,
    p99Ms,
    non2xx: 0,
    socketErrors: 0,
    peakRssMb: 100,
    cpuUsPerRequest,
    stealPercent: 0,
    attempts: 1,
    round: 1,
    ...extra,
  }
}

function load(name: string, requests: number, p99Ms: number, connections: number): LoadFigures {
  return {
    load: name,
    connections,
    requests,
    requestsPerSecond: requests / 5,
    p50Ms: p99Ms / 4,
    p99Ms,
    non2xx: 0,
    socketErrors: 0,
  }
}

describe('the report of the list shapes and the mixed scenario', () => {
  it('ranks the shape classes by p99, worst first, and marks the worst CPU apart', () => {
    const [ranking] = rankShapes([
      measurement('get', 900, 900),
      measurement('page', 4, 150),
      measurement('search-long', 35, 380),
      measurement('filter-date', 12, 520),
    ])
    assert.deepEqual(
      ranking!.classes.map((c) => [c.scenario, c.worstP99, c.worstCpu]),
      [
        ['search-long', true, false],
        ['filter-date', false, true],
        ['page', false, false],
      ],
    )
    const table = formatShapeTable([ranking!]).split('\n')
    assert.match(table[2]!, /search-long .*\| +p99 \|$/)
    assert.match(table[3]!, /filter-date .*\| +CPU \|$/)
  })

  it('puts a class none of whose requests was answered first, and misses its goal', () => {
    const measurements = [
      measurement('page', 4, 150),
      measurement('filter-status', 0, 0, { requests: 0, requestsPerSecond: 0 }),
    ]
    const [first] = rankShapes(measurements)[0]!.classes
    assert.deepEqual(
      [first?.scenario, first?.worstP99, first?.worstCpu],
      ['filter-status', true, true],
    )
    assert.deepEqual(
      checkShapes(measurements).map((c) => c.met),
      [false, false],
    )
    assert.match(
      formatShapeTable(rankShapes(measurements)),
      /filter-status +\| +0 \| +0 \| +— \| +— \| +— \|/,
    )
  })

  it('judges the shapes against 20 ms and 400 µs, update against 30 ms', () => {
    const met = (measurements: Measurement[]) =>
      checkShapes(measurements).map((c) => [c.goal, c.met])
    assert.deepEqual(met([measurement('page', 19, 390), measurement('search-long', 12, 400)]), [
      ['every list shape: p99 < 20 ms', true],
      ['list shapes: worst CPU <= 400 µs/req', true],
    ])
    assert.deepEqual(met([measurement('page', 20, 401), measurement('update', 31, 200)]), [
      ['every list shape: p99 < 20 ms', false],
      ['list shapes: worst CPU <= 400 µs/req', false],
      ['update: p99 < 30 ms', false],
    ])
  })

  it("judges the shapes on PostgreSQL against 100 ms and 2 ms of its CPU and the service's", () => {
    const pg = (scenario: string, p99: number, cpu: number, pgCpu: number) =>
      measurement(scenario, p99, cpu, { target: 'pg', pgCpuUsPerRequest: pgCpu })
    const met = (measurements: Measurement[]) =>
      checkShapes(measurements).map((c) => [c.goal, c.actual, c.met])
    assert.deepEqual(met([pg('page', 99, 300, 100), pg('search-long', 40, 200, 1800)]), [
      ['every list shape: p99 < 100 ms', 'worst page, p99 99.00 ms', true],
      [
        'list shapes: worst service + PostgreSQL CPU <= 2000 µs/req',
        'search-long, 2000.0 µs/req',
        true,
      ],
    ])
    assert.deepEqual(
      met([pg('page', 100, 300, 100), pg('search-long', 40, 200, 1801)]).map((c) => c[2]),
      [false, false],
    )
    assert.match(
      formatShapeTable(rankShapes([pg('page', 10, 300, 123.4)])),
      /page +\|.* 300\.0 \| +123\.4 \|/,
    )
  })

  it('reports the reads of the mixed scenario apart from its writes and against reads alone', () => {
    /** The mixed scenario's summary and checks, its reads at `p99` ms beside 10 ms reads alone. */
    const mixed = (reads: number, writes: number, p99: number) => {
      const measurements = [
        measurement('reads-only', 10, 100),
        measurement('mixed', p99, 120, {
          loads: [load('reads', reads, p99, 45), load('writes', writes, 25, 5)],
        }),
      ]
      return { summary: summariseMixed(measurements)[0], checks: checkShapes(measurements) }
    }
    const { summary, checks } = mixed(9000, 1000, 14)
    assert.equal(summary?.writeShare, 0.1)
    assert.equal(summary?.readsP99VsReadsOnly, 1.4)
    assert.deepEqual(
      checks.map((c) => [c.goal, c.met]),
      [
        ['mixed: writes >= 9 % of requests', true],
        ['mixed: reads p99 < 20 ms', true],
        ['mixed: reads p99 <= 1.5x without writes', true],
      ],
    )
    const met = (reads: number, writes: number, p99: number) =>
      mixed(reads, writes, p99).checks.map((c) => c.met)
    assert.deepEqual(met(9720, 280, 12), [false, true, true], 'writes 2.8 % of the requests')
    assert.deepEqual(met(9000, 1000, 16), [true, true, false], 'reads p99 1.6x')
  })

  it('counts what a write costs the server, the reads it made dearer included, round by round', () => {
    // Reads alone: 100 µs each (90 on the main thread); beside 1,000 writes: 120 a request (100).
    const round = (n: number, mixedCpu: number): Measurement[] => [
      measurement('reads-only', 10, 100, { round: n, mainThreadCpuUsPerRequest: 90 }),
      measurement('mixed', 14, mixedCpu, {
        round: n,
        mainThreadCpuUsPerRequest: 100,
        loads: [load('reads', 9000, 14, 35), load('writes', 1000, 60, 15)],
      }),
    ]
    const rounds = [...round(1, 120), ...round(2, 130), ...round(3, 110)]
    const [summary] = summariseMixed([rounds[0]!, rounds[1]!], rounds)
    // (120 × 10,000 − 100 × 9,000) / 1,000 = 300; the rounds give 300, 400 and 200.
    assert.equal(summary?.writeCostUs, 300)
    assert.equal(summary?.writeMainThreadCostUs, 190)
    assert.match(
      formatMixedTable([summary!]),
      /a write costs 300 µs of CPU \(190 on the event loop\), counting the reads it made dearer/,
    )
    // Results written before the main thread was measured: the total only.
    const older = rounds.map(({ mainThreadCpuUsPerRequest: _, ...m }) => m)
    const [before] = summariseMixed([older[0]!, older[1]!], older)
    assert.equal(before?.writeCostUs, 300)
    assert.equal(before?.writeMainThreadCostUs, undefined)
  })

  it('sets the reads with writes against the reads alone of the same round, the median of the rounds', () => {
    const round = (n: number, alone: number, reads: number): Measurement[] => [
      measurement('reads-only', alone, 100, { round: n }),
      measurement('mixed', reads, 120, {
        round: n,
        loads: [load('reads', 9000, reads, 35), load('writes', 1000, 60, 15)],
      }),
    ]
    // A slow first round: the kept runs, one of each scenario, come from different rounds.
    const rounds = [...round(1, 26, 31), ...round(2, 17, 25), ...round(3, 17, 19)]
    const kept = [rounds[2]!, rounds[1]!]
    const [summary] = summariseMixed(kept, rounds)
    assert.deepEqual(
      summary?.roundRatios?.map((r) => r.toFixed(3)),
      ['1.192', '1.471', '1.118'],
    )
    assert.equal(summary?.readsP99VsReadsOnly?.toFixed(3), '1.192')
    assert.equal(summary?.readsP99VsMedianRounds?.toFixed(3), '1.824')
    const ratioCheck = checkShapes(kept, rounds).at(-1)!
    assert.deepEqual([ratioCheck.actual, ratioCheck.met], ['1.19x (median of the rounds)', true])
    // Two rounds: the mean of the two.
    const two = summariseMixed(kept, rounds.slice(2))[0]
    assert.equal(two?.readsP99VsReadsOnly?.toFixed(3), '1.294')
    // A round whose reads got no answer beside the writes is left out of the pairs.
    const unanswered = round(4, 17, 0).map((m) =>
      m.scenario === 'mixed'
        ? { ...m, loads: [load('reads', 0, 0, 35), load('writes', 10, 60, 15)] }
        : m,
    )
    assert.equal(summariseMixed(kept, [...rounds, ...unanswered])[0]?.roundRatios?.length, 3)
  })

  it('sets the writes alone against the core, for the least the reads can slow down beside them', () => {
    // Reads alone: 8,000 a second at 120 µs, 96 % of the core; beside them 600 writes a second,
    // each costing 400, 500 and 300 µs alone in the three rounds.
    const round = (n: number, writeCpu: number): Measurement[] => [
      measurement('reads-only', 10, 120, { round: n, requestsPerSecond: 8000 }),
      measurement('mixed', 16, 150, {
        round: n,
        loads: [load('reads', 27000, 16, 40), load('writes', 3000, 30, 10)],
      }),
      measurement('writes-only', 20, writeCpu, { round: n, requestsPerSecond: 2000 }),
    ]
    const rounds = [...round(1, 400), ...round(2, 500), ...round(3, 300)]
    const [summary] = summariseMixed(rounds.slice(0, 3), rounds)
    const alone = summary?.writesAlone
    assert.equal(alone?.cpuUsPerWrite, 400)
    // 600 × 400 µs = 24 % of the core: at least 0.96 / 0.76 of the reads' mean latency.
    assert.equal(alone?.coreShare.toFixed(3), '0.240')
    assert.equal(alone?.readsMeanLatencyFloor.toFixed(3), '1.263')
    const table = formatMixedTable([summary!])
    assert.match(table, /\| uws +\| writes, without reads +\| +10 \| +5,000 \|/)
    assert.match(
      table,
      /alone, a write costs 400 µs: the mixed run's writes took at least 24\.0 % of the core, and the reads' mean latency beside them is at least 1\.26x their mean without/,
    )
    // Without a writes-only run (or one with no answer), no figure.
    assert.equal(summariseMixed(rounds.slice(0, 2), rounds.slice(0, 2))[0]?.writesAlone, undefined)
    const unanswered = rounds.map((m) => (m.scenario === 'writes-only' ? { ...m, requests: 0 } : m))
    assert.equal(summariseMixed(unanswered.slice(0, 3), unanswered)[0]?.writesAlone, undefined)
  })

  it('misses the mixed goals when no read was answered beside the writes', () => {
    const measurements = [
      measurement('reads-only', 10, 100),
      measurement('mixed', 0, 120, {
        loads: [load('reads', 0, 0, 45), load('writes', 50, 25, 5)],
      }),
    ]
    assert.equal(summariseMixed(measurements)[0]?.readsP99VsReadsOnly, undefined)
    assert.deepEqual(
      checkShapes(measurements).map((c) => c.met),
      [true, false, false],
    )
  })
})
