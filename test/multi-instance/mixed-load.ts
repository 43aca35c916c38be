import assert from 'node:assert/strict'
import { setTimeout as delay } from 'node:timers/promises'
import { letters, versionOf, type Reply } from '../faults/fault-support.js'
import type { Random } from '../support/random.js'
import type { InstanceGroup, Session } from './instance-group.js'

type Json = Record<string, unknown>

/**
 * What one session may spend before its lane moves to the next, below the default limits of
 * 10 writes and 100 other requests a minute per client, with room for a request lost in flight
 * that took a token anyway: no answer of the load is ever a 429.
 */
const WRITES_PER_SESSION = 8
const READS_PER_SESSION = 80
/** Records a lane creates at most, so that one page lists them all. */
const RECORDS_PER_LANE = 40
/** Between two requests of a lane: the load stays modest on two shared cores. */
const PAUSE_MS = 10

/** One record as the load knows it. */
interface Tracked {
  readonly id: number
  version: number
  /** first_name and status of the last acknowledged write. */
  acknowledged: { first_name: string; status: string }
  /** What a write that was never answered would have set, until the record is read again. */
  inDoubt: { first_name: string; status: string } | undefined
}

/** A request that got no answer: its connection failed. */
export interface Unanswered {
  readonly instance: number
  readonly method: string
}

/** An answer the load did not expect. */
export interface Unexpected {
  readonly instance: number
  readonly method: string
  readonly path: string
  readonly status: number
  readonly body: string
}

/**
 * Lanes of traffic over the running instances of a group, each one request at a time: about a
 * third writes (creates, updates with If-Match, status changes) and the rest reads and searches,
 * each request to the next instance in turn. It keeps what every acknowledged write set, and what every unanswered write might have
 * set, so that {@link MixedLoad.verify} can tell that nothing acknowledged was lost.
 */
export class MixedLoad {
  /** Answers by status. */
  readonly statuses = new Map<number, number>()
  readonly unanswered: Unanswered[] = []
  readonly unexpected: Unexpected[] = []
  acknowledgedWrites = 0
  /** Lanes that ended early, every session spent: the load then thinned before its end. */
  starvedLanes = 0
  readonly #group: InstanceGroup
  readonly #sessions: Session[]
  readonly #random: Random
  readonly #tag: string
  readonly #lanes: { records: Tracked[]; unansweredCreates: string[] }[] = []
  #running: Promise<void>[] = []
  #stopping = false

  /**
   * @param sessions Logged-in sessions, one client each; a lane takes the next one when its
   *   own has spent its budget, and ends when none is left.
   * @param tag Starts every last name the load writes: a word no other case uses.
   */
  constructor(group: InstanceGroup, sessions: Session[], random: Random, tag: string) {
    this.#group = group
    this.#sessions = [...sessions]
    this.#random = random
    this.#tag = tag
  }

  /** Starts `lanes` lanes. */
  start(lanes: number): void {
    for (let lane = 0; lane < lanes; lane++) {
      this.#lanes.push({ records: [], unansweredCreates: [] })
      this.#running.push(this.#lane(lane))
    }
  }

  /** Asks the lanes to end after their request in flight, and waits for them. */
  async stop(): Promise<void> {
    this.#stopping = true
    await Promise.all(this.#running)
    this.#running = []
  }

  /** Requests answered so far. */
  get answered(): number {
    let sum = 0
    for (const count of this.statuses.values()) sum += count
    return sum
  }

  /** The statuses seen, as `{ "201": 12, … }`, for messages. */
  get summary(): string {
    return JSON.stringify(Object.fromEntries([...this.statuses].sort(([a], [b]) => a - b)))
  }

  /**
   * Lists each lane's records on instance `i` and checks that every acknowledged create is
   * there with the name and status of its last acknowledged write (or, for a write that was
   * never answered, those it would have set), and that nothing else is, but for creates that
   * were never answered.
   */
  async verify(i: number, session: Session): Promise<void> {
    for (const [lane, { records, unansweredCreates }] of this.#lanes.entries()) {
      const reply = await this.#group.send(
        i,
        'GET',
        `/v3/beneficiaries?search=${this.#lastName(lane)}&per_page=100`,
        { session },
      )
      assert.equal(reply.status, 200, reply.body)
      const listed = new Map(
        (reply.json!['data'] as Json[]).map((item) => [Number(item['id']), item]),
      )
      const total = (reply.json!['meta'] as Json)['total_count'] as number
      assert.equal(total, listed.size, `lane ${lane}: more than one page`)
      for (const record of records) {
        const item = listed.get(record.id)
        assert.ok(item !== undefined, `instance ${i}: acknowledged #${record.id} is lost`)
        const stored = { first_name: item['first_name'], status: item['status'] }
        if (record.inDoubt === undefined || stored.first_name === record.acknowledged.first_name) {
          assert.deepEqual(stored, record.acknowledged, `instance ${i}: #${record.id}`)
        } else {
          assert.deepEqual(
            stored,
            record.inDoubt,
            `instance ${i}: #${record.id} (unanswered write)`,
          )
        }
        listed.delete(record.id)
      }
      for (const item of listed.values()) {
        assert.ok(
          unansweredCreates.includes(String(item['first_name'])),
          `instance ${i}: #${String(item['id'])} was never created by the load`,
        )
      }
    }
  }

  #lastName(lane: number): string {
    return `${this.#tag}${letters(lane)}`
  }

  async #lane(lane: number): Promise<void> {
    const { records, unansweredCreates } = this.#lanes[lane]!
    let names = 0
    let session = this.#sessions.shift()
    let writes = 0
    let reads = 0
    while (!this.#stopping) {
      const choice = this.#random.next()
      const creating = records.length < 2 || (choice < 0.12 && records.length < RECORDS_PER_LANE)
      const writing = creating || choice < 0.32
      if ((writing && writes === WRITES_PER_SESSION) || reads === READS_PER_SESSION) {
        session = this.#sessions.shift()
        if (session === undefined) {
          this.starvedLanes++
          return
        }
        writes = 0
        reads = 0
      }
      const i = this.#group.next()
      const send = (
        method: string,
        path: string,
        body?: unknown,
        headers?: Record<string, string>,
      ) => this.#send(i, session!, method, path, body, headers)
      await delay(PAUSE_MS)
      if (creating) {
        writes++
        const first_name = `Load${letters(names++)}`
        const body = { first_name, last_name: this.#lastName(lane), email: `load@example.org` }
        const reply = await send('POST', '/v3/beneficiaries', body)
        if (reply === undefined) unansweredCreates.push(first_name)
        else if (this.#expect(reply, i, 'POST', '/v3/beneficiaries', 201)) {
          const id = Number(reply.json!['id'])
          records.push({
            id,
            version: 1,
            acknowledged: { first_name, status: 'pending' },
            inDoubt: undefined,
          })
          this.acknowledgedWrites++
        }
        continue
      }
      const record = this.#random.pick(records)
      const path = `/v3/beneficiaries/${record.id}`
      if (!writing && choice >= 0.7) {
        reads++
        const list = `/v3/beneficiaries?search=${this.#lastName(lane)}&per_page=10&sort=-id`
        const reply = await send('GET', list)
        if (reply !== undefined) this.#expect(reply, i, 'GET', list, 200)
        continue
      }
      if (record.inDoubt !== undefined || !writing) {
        reads++
        const reply = await send('GET', path)
        if (reply !== undefined && this.#expect(reply, i, 'GET', path, 200))
          this.#resync(record, reply)
        continue
      }
      writes++
      const ifMatch = { 'if-match': `"v${record.version}"` }
      let next: { first_name: string; status: string }
      let reply: Reply | undefined
      let method: string
      if (choice < 0.24) {
        next = { ...record.acknowledged, first_name: `Load${letters(names++)}` }
        method = 'PUT'
        reply = await send(method, path, { first_name: next.first_name }, ifMatch)
      } else {
        next = {
          ...record.acknowledged,
          status: record.acknowledged.status === 'active' ? 'inactive' : 'active',
        }
        method = 'POST'
        reply = await send(method, `${path}/status`, { status: next.status }, ifMatch)
      }
      if (reply === undefined) record.inDoubt = next
      else if (this.#expect(reply, i, method, path, 200)) {
        record.version = versionOf(reply)
        record.acknowledged = next
        this.acknowledgedWrites++
      }
    }
  }

  /**
   * Takes what a read found: after a write that was never answered, the record holds either
   * what was acknowledged before it or, one version later, what it set.
   */
  #resync(record: Tracked, reply: Reply): void {
    const version = versionOf(reply)
    const stored = {
      first_name: String(reply.json!['first_name']),
      status: String(reply.json!['status']),
    }
    if (version === record.version) {
      assert.deepEqual(stored, record.acknowledged, `#${record.id} v${version}`)
    } else {
      assert.equal(version, record.version + 1, `#${record.id}: v${record.version} acknowledged`)
      assert.deepEqual(stored, record.inDoubt, `#${record.id}: the unanswered write`)
      record.version = version
      record.acknowledged = stored
    }
    record.inDoubt = undefined
  }

  async #send(
    i: number,
    session: Session,
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<Reply | undefined> {
    try {
      const reply = await this.#group.send(i, method, path, {
        session,
        ...(body !== undefined && { body }),
        ...(headers !== undefined && { headers }),
      })
      this.statuses.set(reply.status, (this.statuses.get(reply.status) ?? 0) + 1)
      return reply
    } catch {
      this.unanswered.push({ instance: i, method })
      return undefined
    }
  }

  #expect(reply: Reply, instance: number, method: string, path: string, status: number): boolean {
    if (reply.status === status) return true
    this.unexpected.push({
      instance,
      method,
      path,
      status: reply.status,
      body: reply.body.slice(0, 300),
    })
    return false
  }
}
