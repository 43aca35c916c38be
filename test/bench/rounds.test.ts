import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Measurement } from '../../bench/result-table.js'
import { keepMedianRounds } from '../../bench/rounds.js'

function measurement(
  target: Measurement['target'],
  scenario: string,
  round: number,
  requestsPerSecond: number,
  peakRssMb = 100,
): Measurement {
  return {
    scenario,
    target,
    requestsPerSecond,
    requests: requestsPerSecond * 5,
    p50Ms: 1000 / requestsPerSecond,
    p99Ms: 4000 / requestsPerSecond,
    non2xx: 0,
    socketErrors: 0,
    peakRssMb,
    cpuUsPerRequest: 100,
    stealPercent: 0,
    attempts: 1,
    round,
  }
}

describe('keepMedianRounds', () => {
  it('keeps the median round of each target and scenario whole, with every round’s rate', () => {
    const kept = keepMedianRounds([
      measurement('peer', 'create', 1, 3000),
      measurement('uws', 'create', 1, 6000),
      measurement('peer', 'create', 2, 3500),
      measurement('uws', 'create', 2, 4000),
      measurement('peer', 'create', 3, 2900),
      measurement('uws', 'create', 3, 5500),
    ])
    assert.deepEqual(
      kept.map((m) => [m.target, m.round, m.requestsPerSecond, m.p50Ms]),
      [
        ['peer', 1, 3000, 1000 / 3000],
        ['uws', 3, 5500, 1000 / 5500],
      ],
    )
    assert.deepEqual(kept[1]!.roundsRequestsPerSecond, [6000, 4000, 5500])
  })

  it('takes the lower of the two middle rounds of an even number, and one round as it is', () => {
    const two = keepMedianRounds([
      measurement('uws', 'get', 1, 30_000),
      measurement('uws', 'get', 2, 20_000),
    ])
    assert.equal(two[0]!.requestsPerSecond, 20_000)
    const one = keepMedianRounds([measurement('limit', 'get', 1, 90_000)])
    assert.deepEqual(one, [
      { ...measurement('limit', 'get', 1, 90_000), roundsRequestsPerSecond: [90_000] },
    ])
  })

  it('reports the highest peak resident set of every round, and keeps the order of first runs', () => {
    const kept = keepMedianRounds([
      measurement('uws', 'get', 1, 100, 180),
      measurement('uws', 'list', 1, 100, 190),
      measurement('uws', 'get', 2, 200, 250),
      measurement('uws', 'list', 2, 50, 170),
      measurement('uws', 'get', 3, 300, 200),
      measurement('uws', 'list', 3, 75, 160),
    ])
    assert.deepEqual(
      kept.map((m) => [m.scenario, m.round, m.peakRssMb]),
      [
        ['get', 2, 250],
        ['list', 3, 190],
      ],
    )
  })
})
