import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { openSqliteStorage, type SqliteStorage } from '../../adapters/sqlite/index.js'
import { createBeneficiaryService, type ProvisionedClient } from '../../core/index.js'
import { createHandler, type ApiHandler } from '../../server/handler.js'
import { nodeSha256 } from '../../server/node-sha256.js'
import { send } from '../server/server-fixtures.js'
import { countStorageCalls, type StorageCalls } from './security-fixtures.js'

// D1: "an unknown client_id costs the same work and gets the same answer as a wrong secret", so
// that timing a login does not tell an attacker which client ids exist. Measured in-process,
// through the handler, on a real SQLite file, with the two kinds of failed login interleaved.

const SAMPLES = process.env['TEST_LONG'] === '1' ? 3_000 : 300
const WARM_UP = 50

let directory: string
let sqlite: SqliteStorage

before(async () => {
  directory = mkdtempSync(join(tmpdir(), 'security-timing-'))
  sqlite = await openSqliteStorage({ path: join(directory, 'timing.sqlite') })
})

after(async () => {
  await sqlite.close()
  rmSync(directory, { recursive: true, force: true })
})

/** A login service over the shared SQLite file, hashing with `hash`; counts storage calls. */
async function loginWorld(
  hash: (text: string) => string,
): Promise<{ handler: ApiHandler; client: ProvisionedClient; calls: StorageCalls }> {
  const { storage, calls } = countStorageCalls(sqlite)
  const service = await createBeneficiaryService({
    storage,
    sha256: hash,
    limits: { auth: 1_000_000, write: 10, standard: 100 },
  })
  const client = await service.clients.create({ name: 'Timed', scopes: ['read'] })
  return { handler: createHandler(service), client, calls }
}

/** A client id shaped like a real one (`cl_` and 16 characters) that no client has. */
function unknownClientId(): string {
  return `cl_${randomBytes(12).toString('base64url')}`
}

function randomSecret(): string {
  return randomBytes(32).toString('base64url')
}

/** Nanoseconds one failed login takes through the handler; asserts it failed as D6 says. */
async function timeLogin(handler: ApiHandler, clientId: string): Promise<number> {
  const body = { client_id: clientId, client_secret: randomSecret() }
  const start = process.hrtime.bigint()
  const answer = await send(handler, 'POST', '/v3/auth/login', { body })
  const elapsed = Number(process.hrtime.bigint() - start)
  assert.equal(answer.status, 401)
  assert.equal(answer.json?.['error'], 'invalid_credentials')
  return elapsed
}

/**
 * Times `samples` logins with an unknown id and as many with a known id and a wrong secret,
 * interleaved in a random order so that both kinds see the same machine noise; and, between
 * them, one call of `probe` each time, when given.
 */
async function measure(
  handler: ApiHandler,
  knownId: string,
  samples: number,
  probe?: () => void,
): Promise<{ unknown: number[]; wrongSecret: number[]; probe: number[] }> {
  const unknown: number[] = []
  const wrongSecret: number[] = []
  const probed: number[] = []
  for (let i = 0; i < samples; i++) {
    if (Math.random() < 0.5) {
      unknown.push(await timeLogin(handler, unknownClientId()))
      wrongSecret.push(await timeLogin(handler, knownId))
    } else {
      wrongSecret.push(await timeLogin(handler, knownId))
      unknown.push(await timeLogin(handler, unknownClientId()))
    }
    if (probe !== undefined) {
      const start = process.hrtime.bigint()
      probe()
      probed.push(Number(process.hrtime.bigint() - start))
    }
  }
  return { unknown, wrongSecret, probe: probed }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/** The mean of the middle half: robust to the scheduler's outliers on a shared machine. */
function trimmedMean(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.slice(Math.floor(sorted.length / 4), Math.ceil((sorted.length * 3) / 4))
  return middle.reduce((sum, value) => sum + value, 0) / middle.length
}

let costlyRounds = 1_000

/** A genuine SHA-256 that costs `costlyRounds` more digests, as a deliberately slow check would. */
function costlySha256(text: string): string {
  let digest = createHash('sha256').update(text).digest()
  for (let i = 0; i < costlyRounds; i++) digest = createHash('sha256').update(digest).digest()
  return nodeSha256(text)
}

/** Sets `costlyRounds` so that one costly hash takes roughly `targetNs` on this machine. */
function calibrate(targetNs: number): void {
  const costOf = (): number => {
    const times: number[] = []
    for (let i = 0; i < 30; i++) {
      const start = process.hrtime.bigint()
      costlySha256(randomSecret())
      times.push(Number(process.hrtime.bigint() - start))
    }
    return median(times)
  }
  costlyRounds = 1_000
  costOf() // warms the JIT up
  costlyRounds = Math.max(100, Math.round((costlyRounds * targetNs) / costOf()))
}

describe('login timing (D1)', () => {
  it('D1: an unknown client id does the same work as a wrong secret: one client lookup and one secret hash', async () => {
    let hashes = 0
    const { handler, client, calls } = await loginWorld((text) => {
      hashes++
      return nodeSha256(text)
    })
    const work = async (clientId: string): Promise<[number, Record<string, number>]> => {
      hashes = 0
      calls.reset()
      await timeLogin(handler, clientId)
      return [hashes, calls.snapshot()]
    }
    const unknown = await work(unknownClientId())
    const wrongSecret = await work(client.client_id)
    assert.deepEqual(unknown, wrongSecret)
    assert.deepEqual(unknown, [1, { 'clients.get': 1 }])
  })

  it('D1: with a secret check made costly (half a millisecond), unknown ids and wrong secrets take indistinguishable time', async () => {
    // The hash is made costly on purpose: had the core skipped it for unknown ids, they would be
    // a whole hash faster, far beyond any noise; since it does not, the two kinds must match.
    calibrate(500_000)
    const { handler, client } = await loginWorld(costlySha256)
    const probe = (): void => void costlySha256(randomSecret())
    await measure(handler, client.client_id, WARM_UP, probe)
    const measured = await measure(handler, client.client_id, SAMPLES, probe)
    const { unknown, wrongSecret } = measured
    // What one hash costs, measured among the logins, under the same noise.
    const hashNs = median(measured.probe)
    const report = describeTimes(unknown, wrongSecret, hashNs)
    // Indistinguishable: the difference is a small fraction of the hash an unknown id would save.
    assert.ok(Math.abs(median(unknown) - median(wrongSecret)) < 0.3 * hashNs, report)
    assert.ok(Math.abs(trimmedMean(unknown) - trimmedMean(wrongSecret)) < 0.3 * hashNs, report)
    // And the measurement is sound: both kinds did pay for the hash.
    assert.ok(Math.min(median(unknown), median(wrongSecret)) > 0.5 * hashNs, report)
  })

  it('D1: in the shipped configuration (SHA-256 on Node), unknown ids and wrong secrets take indistinguishable time', async () => {
    const { handler, client } = await loginWorld(nodeSha256)
    await measure(handler, client.client_id, WARM_UP)
    const { unknown, wrongSecret } = await measure(handler, client.client_id, SAMPLES)
    const report = describeTimes(unknown, wrongSecret)
    const typical = Math.min(median(unknown), median(wrongSecret))
    // Loose: a quarter of a whole login (tens of microseconds), so that only a real difference
    // in work, such as a second lookup or a costly check for known ids only, can exceed it.
    const tolerance = Math.max(0.25 * typical, 25_000)
    assert.ok(Math.abs(median(unknown) - median(wrongSecret)) < tolerance, report)
    assert.ok(Math.abs(trimmedMean(unknown) - trimmedMean(wrongSecret)) < tolerance, report)
  })
})

function describeTimes(unknown: number[], wrongSecret: number[], hashNs?: number): string {
  const us = (ns: number): string => `${(ns / 1000).toFixed(1)} µs`
  return [
    `unknown id: median ${us(median(unknown))}, trimmed mean ${us(trimmedMean(unknown))}`,
    `wrong secret: median ${us(median(wrongSecret))}, trimmed mean ${us(trimmedMean(wrongSecret))}`,
    ...(hashNs === undefined ? [] : [`one hash: ${us(hashNs)}`]),
  ].join('; ')
}
