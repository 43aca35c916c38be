import type { Measurement } from './result-table.js'

/** The measurement kept for a target and scenario, with the requests per second of every round. */
export interface KeptMeasurement extends Measurement {
  /** Requests per second in each round, in the order the rounds ran. */
  readonly roundsRequestsPerSecond: readonly number[]
}

/**
 * One measurement per target and scenario out of the rounds of a run: the round with the median
 * requests per second (of an even number, the lower of the two middle ones), whole, so that its
 * latencies, CPU and steal belong together; its peak resident set is the highest of every round,
 * as the memory goal is about the whole run. The choice is the same for every target, and a
 * slow spell of the machine during one round moves the median of the targets measured in it
 * much less than their single figures. Keeps the order in which targets and scenarios first ran.
 */
export function keepMedianRounds(measurements: readonly Measurement[]): KeptMeasurement[] {
  const groups = new Map<string, Measurement[]>()
  for (const m of measurements) {
    const key = `${m.target} ${m.scenario}`
    const group = groups.get(key)
    if (group === undefined) groups.set(key, [m])
    else group.push(m)
  }
  return [...groups.values()].map((group) => {
    const inOrder = [...group].sort((a, b) => a.round - b.round)
    const byRate = [...group].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond)
    const median = byRate[(byRate.length - 1) >> 1]!
    return {
      ...median,
      peakRssMb: Math.max(...group.map((m) => m.peakRssMb)),
      roundsRequestsPerSecond: inOrder.map((m) => m.requestsPerSecond),
    }
  })
}
