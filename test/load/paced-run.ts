import { setTimeout as sleep } from 'node:timers/promises'
import type { LoadActor, Sample } from './load-actor.js'

/**
 * The open-loop load: every actor issues `perActor` requests at evenly spaced planned moments
 * over `seconds`, whatever the answers do (a slow answer does not delay the next request, so
 * queueing in the server shows in the latencies instead of slowing the load down). The actors'
 * schedules are offset from each other so that arrivals spread over each interval, with a small
 * deterministic jitter. Resolves with every sample once the last request is answered.
 */
export async function runOpenLoop(
  actors: readonly LoadActor[],
  seconds: number,
  perActor: number,
  start: number,
): Promise<Sample[]> {
  const interval = (seconds * 1000) / perActor
  const runs = actors.map((actor, n) =>
    drive(actor, start + (n / actors.length) * interval, interval, perActor, n),
  )
  return (await Promise.all(runs)).flat()
}

/**
 * The unloaded reference: `count` requests of the same mix, one at a time, at `perSecond` planned
 * moments (a request whose moment comes while the previous one is still out waits for it).
 * Arrivals at planned times, rather than back to back, sample a stall of the machine in the same
 * proportion as the open-loop load does: by the time it lasts, not by one request.
 */
export async function runPacedSequence(
  actors: readonly LoadActor[],
  count: number,
  perSecond: number,
  offset: number,
): Promise<Sample[]> {
  const samples: Sample[] = []
  const start = performance.now()
  for (let n = 0; n < count; n++) {
    await waitUntil(start + (n * 1000) / perSecond)
    samples.push(await actors[(offset + n) % actors.length]!.step())
  }
  return samples
}

async function drive(
  actor: LoadActor,
  first: number,
  interval: number,
  count: number,
  seed: number,
): Promise<Sample[]> {
  const pending: Promise<Sample>[] = []
  let state = seed + 1
  for (let k = 0; k < count; k++) {
    // Up to a quarter interval early or late, so the actors do not march in lock-step.
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648
    await waitUntil(first + k * interval + (state / 2_147_483_648 - 0.5) * 0.5 * interval)
    pending.push(actor.step())
  }
  return Promise.all(pending)
}

/** Pacing a load generator: waits for the planned moment of the next request. */
async function waitUntil(moment: number): Promise<void> {
  const wait = moment - performance.now()
  if (wait > 1) await sleep(wait)
}
