import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { openSqliteStorage, seedBeneficiaries } from '../../adapters/sqlite/index.js'
import { createBeneficiaryService } from '../../core/index.js'
import { detailOf } from '../../core/representation.js'
import { fakeBeneficiaries } from '../../server/cli/fake-beneficiaries.js'
import { HttpConnection } from './http-connection.js'
import {
  LoadActor,
  REQUESTS_PER_CYCLE,
  WRITES_PER_CYCLE,
  type Ledger,
  type Sample,
} from './load-actor.js'
import { leastSquaresSlope, median, percentile } from './load-statistics.js'
import { runOpenLoop, runPacedSequence } from './paced-run.js'
import { ServeChild } from './serve-child.js'

// The short form runs in `npm test`; TEST_LONG=1 (npm run test:long) selects the long one.
const LONG = process.env['TEST_LONG'] === '1'
const MIB = 1024 * 1024
// Growth of the resident set after the warm-up that counts as a leak: the least-squares trend
// over the measured window, and the rise of the median from its first third to its last. A
// healthy server grows too, by the garbage that waits in V8's old space for the next full
// collection, and how much waits depends on the Node.js line's collector: over the 15 s window
// of the short form, 1–5 MiB on Node.js 20 and 5–9 MiB on Node.js 22 (trend up to 9.0 MiB,
// thirds up to 6.7 MiB, seen on this machine); 3–8 MiB over the 45 s of the long one. A server
// that keeps every request it handled, with its response and 4 KiB beside it, grows by 20 MiB
// in the short form and fails both bounds (checked on purpose); a leak of under 2 KiB per
// request hides in that garbage at these lengths.
// From Node.js 24, V8 commits a young generation of two 32 MiB semi-spaces here (16 MiB ones on
// Node.js 20), and the resident set grows as allocations first touch its pages: by up to 35 MiB
// within the window in the whole suite; 178 -> 212 MiB over one run alone, while the old
// generation stayed at 24-25 MiB. That is no leak, and it would hide one, so on Node.js 24 and later the server's young
// generation is fixed at 4 MiB a semi-space, all touched in the first seconds: 5.0 MiB in the
// whole suite. Not on the older lines: there, the small young generation promotes more garbage
// to the old one, and in the whole suite the trend rose from 4.0 to 6.3 MiB on Node.js 20 and
// from 8.7 to 15.7 MiB on Node.js 22, over the bound.
const YOUNG_GENERATION =
  Number(process.versions.node.split('.')[0]) >= 24
    ? ['--min-semi-space-size=4', '--max-semi-space-size=4']
    : []
const PLAN = LONG
  ? { clients: 100, seconds: 60, warmupSeconds: 15, trendBound: 14 * MIB, thirdsBound: 12 * MIB }
  : { clients: 50, seconds: 20, warmupSeconds: 5, trendBound: 13 * MIB, thirdsBound: 11 * MIB }

// The server runs with its default limits (D19): 10 writes and 100 other requests per client and
// minute, in token buckets that start full and refill continuously.
const WRITE_LIMIT = 10
const STANDARD_LIMIT = 100
// Each client of the load run uses this share of what its buckets allow over the run (the
// capacity plus the refill), spread evenly: paced, open-loop, never a 429.
const BUDGET_SHARE = 0.7
const CYCLES = Math.floor((BUDGET_SHARE * WRITE_LIMIT * (1 + PLAN.seconds / 60)) / WRITES_PER_CYCLE)
const REQUESTS_PER_CLIENT = CYCLES * REQUESTS_PER_CYCLE

// The unloaded reference: the same mix, one request at a time, after a warm-up that lets the
// server's code get compiled; half before the load run and half after it, so that a noisy
// neighbour on the shared machine weighs on both. Its own clients, within their limits too.
const PROBE_CLIENTS = 20
const WARMUP_REQUESTS = 240
const BASELINE_REQUESTS = 300
const BASELINE_PER_SECOND = 60
// A p99 measured on a quiet moment can be well under a millisecond; 5x of that would fail on any
// scheduling hiccup of a shared machine, which says nothing about the server. 2 ms is the floor.
const BASELINE_FLOOR_MS = 2
const P99_FACTOR = 5
// The p99 is judged per quarter of the run: a quarter hit by a neighbour's burst of CPU or disk
// work that the baseline did not see may miss, the other three must hold. A server that cannot
// keep up with the load, or stalls periodically, misses in most of them.
const QUARTERS = 4
// When two bursts spoil one measurement (baseline, load, baseline), it is taken once more, with
// clients of its own; a server that cannot keep up fails both.
const ATTEMPTS = 2

// The database lives in memory (tmpfs) where there is one: this run judges the server under load,
// not the shared machine's disk, whose fsyncs took up to 290 ms on a neighbour's bursts here and,
// since better-sqlite3 commits on the event loop, stalled every request in flight with them. The
// suites in test/faults/ check durability on a real disk; the stall is the benchmark's concern.
const MEMORY_FOLDER = existsSync('/dev/shm') ? '/dev/shm' : undefined

const SEEDED = 3000
const RSS_PERIOD_MS = 500
const REQUEST_TIMEOUT_MS = 10_000
const WRITE_KINDS: ReadonlySet<string> = new Set(['create', 'update', 'status'])

/** One latency measurement: the load run and the unloaded baselines on either side of it. */
interface Measurement {
  baseline: [before: Sample[], after: Sample[]]
  loaded: Sample[]
  loadStart: number
  loadEnd: number
}

/** The p99 judgement of a measurement (see QUARTERS). */
interface Verdict {
  reference: number
  bound: number
  quarters: number[]
  held: boolean
}

interface RunResult {
  /** The first measurement, during which the memory was sampled; the second one if it was needed. */
  measurements: Measurement[]
  rss: { t: number; rss: number }[]
  ledger: Ledger
  loggedLines: number
  errorLines: string[]
  exit: { code: number | null; signal: NodeJS.Signals | null }
  seededFirstId: number
  totalAfter: number
  integrity: unknown
  stored: Map<number, { detail: Record<string, unknown> | undefined; history: number }>
}

describe(`the server under a paced load of ${PLAN.clients} clients for ${PLAN.seconds} s (load)`, () => {
  let directory = ''
  let server: ServeChild | undefined
  const actors: LoadActor[] = []
  let run: RunResult | undefined

  before(
    async () => {
      directory = mkdtempSync(join(MEMORY_FOLDER ?? tmpdir(), 'beneficiaries-load-'))
      const db = join(directory, 'load.sqlite')

      // Clients are provisioned and logged in in-process on the same file, before the server
      // starts: the server then runs with every default but the port (its auth limit of 5 logins
      // per minute and IP would take ten minutes to log 50 clients in from 127.0.0.1).
      const storage = await openSqliteStorage({ path: db })
      const seeded = await seedBeneficiaries(storage, fakeBeneficiaries({ count: SEEDED, seed: 7 }))
      const service = await createBeneficiaryService({
        storage,
        limits: { auth: 10_000, write: WRITE_LIMIT, standard: STANDARD_LIMIT },
      })
      const tokens: string[] = []
      for (let n = 0; n < ATTEMPTS * PLAN.clients + PROBE_CLIENTS; n++) {
        const client = await service.clients.create({
          name: `load-${n}`,
          scopes: ['read', 'write'],
        })
        const login = await service.login(
          { ip: '127.0.0.1' },
          { client_id: client.client_id, client_secret: client.client_secret },
        )
        tokens.push(login.value.access_token)
      }
      await storage.close()

      server = new ServeChild(['--db', db], {}, YOUNG_GENERATION)
      const port = Number(new URL(await server.url).port)
      const ledger: Ledger = new Map()
      for (const [name, token] of tokens.entries()) {
        const connection = new HttpConnection(port, REQUEST_TIMEOUT_MS)
        actors.push(new LoadActor({ name, connection, token, ledger, seeded }))
      }
      const probes = actors.slice(ATTEMPTS * PLAN.clients)
      await runPacedSequence(probes, WARMUP_REQUESTS, Infinity, 0)
      let probed = WARMUP_REQUESTS
      const measure = async (clients: readonly LoadActor[]): Promise<Measurement> => {
        const before = await runPacedSequence(
          probes,
          BASELINE_REQUESTS,
          BASELINE_PER_SECOND,
          probed,
        )
        const loadStart = performance.now() + 20
        const loaded = await runOpenLoop(clients, PLAN.seconds, REQUESTS_PER_CLIENT, loadStart)
        const loadEnd = performance.now()
        probed += BASELINE_REQUESTS
        const after = await runPacedSequence(probes, BASELINE_REQUESTS, BASELINE_PER_SECOND, probed)
        probed += BASELINE_REQUESTS
        return { baseline: [before, after], loaded, loadStart, loadEnd }
      }

      const rss: { t: number; rss: number }[] = []
      const sampler = setInterval(() => {
        const value = server?.rss()
        if (value !== undefined) rss.push({ t: performance.now(), rss: value })
      }, RSS_PERIOD_MS)
      const measurements: Measurement[] = []
      try {
        measurements.push(await measure(actors.slice(0, PLAN.clients)))
      } finally {
        clearInterval(sampler)
      }
      if (!judge(measurements[0]!).held) {
        measurements.push(await measure(actors.slice(PLAN.clients, 2 * PLAN.clients)))
      }
      for (const actor of actors) actor.close()
      const exit = await server.stop(15_000)

      // Read back from the file, with the server stopped.
      const stored: RunResult['stored'] = new Map()
      const reopened = await openSqliteStorage({ path: db })
      let totalAfter: number
      let integrity: unknown
      try {
        integrity = reopened.database.pragma('integrity_check', { simple: true })
        for (const id of ledger.keys()) {
          const record = await reopened.beneficiaries.get(id)
          const history = await reopened.beneficiaries.history(id, 0, 1)
          stored.set(id, {
            detail:
              record === undefined
                ? undefined
                : (JSON.parse(JSON.stringify(detailOf(record))) as Record<string, unknown>),
            history: history?.total ?? 0,
          })
        }
        const all = { offset: 0, limit: 1, sort: 'id', descending: false } as const
        totalAfter = (await reopened.beneficiaries.list(all)).total
      } finally {
        await reopened.close()
      }
      run = {
        measurements,
        rss,
        ledger,
        loggedLines: server.lineCount,
        errorLines: server.errorLines,
        exit,
        seededFirstId: seeded.firstId,
        totalAfter,
        integrity,
        stored,
      }
    },
    { timeout: LONG ? 240_000 : 120_000 },
  )

  after(() => {
    for (const actor of actors) actor.close()
    server?.kill()
    if (directory !== '') rmSync(directory, { recursive: true, force: true })
  })

  it('answers every request with the expected 2xx: no 5xx, no 4xx (so no 429), no connection error', (t) => {
    const result = ran(run)
    const all = result.measurements.flatMap((measured) => [
      ...measured.baseline.flat(),
      ...measured.loaded,
    ])
    const failures = all.flatMap((sample) => (sample.failure === undefined ? [] : [sample.failure]))
    assert.deepEqual(failures.slice(0, 10), [], `${failures.length} failed requests`)
    const first = result.measurements[0]!
    assert.equal(first.loaded.length, PLAN.clients * REQUESTS_PER_CLIENT)
    for (const kind of ['get', 'list', 'search', 'filter', 'create', 'update', 'status']) {
      assert.ok(
        first.loaded.some((sample) => sample.kind === kind),
        kind,
      )
    }
    // Logging was on as in production: at least one line per request, none at level error.
    assert.ok(
      result.loggedLines >= all.length,
      `${result.loggedLines} lines, ${all.length} requests`,
    )
    assert.deepEqual(result.errorLines, [])
    assert.deepEqual(result.exit, { code: 0, signal: null }, 'the server stopped on SIGTERM')
    const seconds = (first.loadEnd - first.loadStart) / 1000
    const writes = first.loaded.filter((sample) => WRITE_KINDS.has(sample.kind)).length
    t.diagnostic(
      `${first.loaded.length} requests (${writes} writes) in ${seconds.toFixed(1)} s: ${(first.loaded.length / seconds).toFixed(0)} requests/s over ${PLAN.clients} connections`,
    )
  })

  it('keeps the p99 latency under load within 5x the unloaded p99 of the same mix', (t) => {
    const result = ran(run)
    const verdicts = result.measurements.map((measured, n) => {
      assert.ok(measured.baseline.every((samples) => samples.length === BASELINE_REQUESTS))
      const verdict = judge(measured)
      t.diagnostic(
        `measurement ${n + 1}, unloaded before the run: ${summary(measured.baseline[0])}`,
      )
      t.diagnostic(`measurement ${n + 1}, under load: ${summary(measured.loaded)}`)
      t.diagnostic(`measurement ${n + 1}, unloaded after the run: ${summary(measured.baseline[1])}`)
      t.diagnostic(
        `measurement ${n + 1}: bound ${verdict.bound.toFixed(2)} ms (${P99_FACTOR} x ${verdict.reference.toFixed(2)}); p99 of each quarter of the run ${verdict.quarters.map((ms) => ms.toFixed(2)).join(', ')} ms`,
      )
      return verdict
    })
    assert.ok(
      verdicts.some((verdict) => verdict.held),
      `p99 over the bound in more than one quarter, in ${verdicts.length} measurements`,
    )
  })

  it('keeps the resident memory of the server flat after the warm-up: no growth trend', (t) => {
    const result = ran(run)
    const { loadStart, loadEnd } = result.measurements[0]!
    const from = loadStart + PLAN.warmupSeconds * 1000
    const window = result.rss.filter((sample) => sample.t >= from && sample.t <= loadEnd)
    assert.ok(window.length >= 10, `only ${window.length} RSS samples after the warm-up`)
    const span = (window.at(-1)!.t - window[0]!.t) / 1000
    const slope = leastSquaresSlope(
      window.map((sample) => ({ x: (sample.t - from) / 1000, y: sample.rss })),
    )
    const third = Math.floor(window.length / 3)
    const first = median(window.slice(0, third).map((sample) => sample.rss))
    const last = median(window.slice(-third).map((sample) => sample.rss))
    t.diagnostic(
      `RSS at the start ${mib(result.rss[0]!.rss)}, after the warm-up ${mib(window[0]!.rss)}, at the end ${mib(window.at(-1)!.rss)}; trend ${(slope / 1024).toFixed(1)} KiB/s, ${mib(slope * span)} over ${span.toFixed(0)} s; median of the first third ${mib(first)}, of the last ${mib(last)}`,
    )
    assert.ok(slope * span < PLAN.trendBound, `RSS trend ${mib(slope * span)} over the run`)
    assert.ok(last - first < PLAN.thirdsBound, `RSS median rose ${mib(last - first)}`)
  })

  it('keeps every acknowledged write in the SQLite file, with its acknowledged content and history', () => {
    const result = ran(run)
    assert.equal(result.integrity, 'ok')
    assert.ok(result.ledger.size > PLAN.clients, 'every client created records')
    for (const [id, acknowledged] of result.ledger) {
      const stored = result.stored.get(id)
      assert.deepEqual(stored?.detail, acknowledged.detail, `beneficiary ${id}`)
      assert.equal(stored?.history, acknowledged.writes, `history of beneficiary ${id}`)
    }
    // Nothing was created that was not acknowledged: the seeded rows plus the acknowledged creates.
    assert.equal(result.totalAfter, SEEDED + result.ledger.size)
    assert.ok([...result.ledger.keys()].every((id) => id >= result.seededFirstId + SEEDED))
  })
})

function judge(measured: Measurement): Verdict {
  const reference = Math.max(p99(measured.baseline.flat()), BASELINE_FLOOR_MS)
  const bound = P99_FACTOR * reference
  const length = (measured.loadEnd - measured.loadStart) / QUARTERS
  const quarters = Array.from({ length: QUARTERS }, (_, n) =>
    p99(
      measured.loaded.filter(
        (sample) => Math.floor((sample.at - measured.loadStart) / length) === n,
      ),
    ),
  )
  const held = quarters.filter((ms) => !(ms <= bound)).length <= 1
  return { reference, bound, quarters, held }
}

function p99(samples: readonly Sample[]): number {
  return percentile(
    samples.map((sample) => sample.ms),
    99,
  )
}

/** p50 and p99 of all requests, of the reads and of the writes, for the report. */
function summary(samples: readonly Sample[]): string {
  const writes = samples.filter((sample) => WRITE_KINDS.has(sample.kind))
  const reads = samples.filter((sample) => !WRITE_KINDS.has(sample.kind))
  const figures = (part: readonly Sample[]): string =>
    `p50 ${median(part.map((sample) => sample.ms)).toFixed(2)} p99 ${p99(part).toFixed(2)}`
  const max = Math.max(...samples.map((sample) => sample.ms))
  return `all ${figures(samples)}, reads ${figures(reads)}, writes ${figures(writes)} ms (${samples.length} requests, max ${max.toFixed(1)} ms)`
}

function mib(bytes: number): string {
  return `${(bytes / MIB).toFixed(1)} MiB`
}

function ran(result: RunResult | undefined): RunResult {
  assert.ok(result !== undefined, 'the load run did not complete')
  return result
}
