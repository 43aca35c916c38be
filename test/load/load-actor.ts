import type { BeneficiaryStatus } from '../../core/index.js'
import type { Exchange, HttpConnection, Outgoing } from './http-connection.js'
import { Random } from '../support/random.js'

/** What a write acknowledged: the record as the server said it is now, and how many changes it has. */
export interface AcknowledgedRecord {
  /** The detail shape the last acknowledged write implies (or returned). */
  detail: Record<string, unknown>
  /** The strong ETag of that state. */
  etag: string
  /** Acknowledged writes so far (create, updates, status changes): its history length. */
  writes: number
  /** True while a write to it is in flight, so no second one is issued against an old ETag. */
  busy: boolean
}

/** Every acknowledged write of the run, by beneficiary id; shared by all actors. */
export type Ledger = Map<number, AcknowledgedRecord>

/** Which operation a request was. */
export type RequestKind = 'get' | 'list' | 'search' | 'filter' | 'create' | 'update' | 'status'

/** One finished request, as the statistics need it. */
export interface Sample {
  readonly kind: RequestKind
  /** When it was issued, `performance.now()` milliseconds. */
  readonly at: number
  readonly ms: number
  readonly status: number
  /** Why it counts as a failure: a connection error or an unexpected answer; undefined if it did not. */
  readonly failure: string | undefined
}

/**
 * The mix, one cycle of eleven requests: ten reads (get by id four times, the first page of the
 * list, search and a filter twice each) and one write (create, update, status change in turn).
 * Ten reads per write is the ratio of the default limits (100 standard, 10 write per minute), so
 * a client paced within one is within the other.
 */
const CYCLE: readonly (RequestKind | 'write')[] = [
  'get',
  'list',
  'get',
  'search',
  'get',
  'write',
  'filter',
  'get',
  'search',
  'list',
  'filter',
]
const WRITES: readonly ('create' | 'update' | 'status')[] = ['create', 'update', 'status']

/** Writes in every cycle of the mix. */
export const WRITES_PER_CYCLE = CYCLE.filter((kind) => kind === 'write').length
/** Requests in every cycle of the mix. */
export const REQUESTS_PER_CYCLE = CYCLE.length

const SEARCHES = ['ross', 'mario', 'giu', 'bianchi', 'fer', 'de luca', 'carico', 'ro ma']
const FILTERS = [
  'status=active',
  'status=pending&per_page=50',
  'created_from=2025-01-01&created_to=2025-06-30',
  'status=inactive&search=ro',
  'status=active&sort=-updated_at',
]
const LISTS = ['', 'per_page=20&sort=-created_at', 'sort=last_name']
const NEXT_STATUS: Readonly<Record<string, BeneficiaryStatus>> = {
  pending: 'active',
  active: 'inactive',
  inactive: 'active',
}

/**
 * One API client of the load run: its token, its own keep-alive connection, and the records it
 * created. `step()` issues the next request of the mix and records what a write acknowledged in
 * the shared ledger; reads go to the seeded records and to the client's own.
 */
export class LoadActor {
  readonly #name: number
  readonly #connection: HttpConnection
  readonly #auth: Readonly<Record<string, string>>
  readonly #ledger: Ledger
  readonly #seeded: { readonly firstId: number; readonly count: number }
  readonly #random: Random
  readonly #own: number[] = []
  #position = 0
  #writes = 0

  constructor(options: {
    name: number
    connection: HttpConnection
    token: string
    ledger: Ledger
    seeded: { firstId: number; count: number }
  }) {
    this.#name = options.name
    this.#connection = options.connection
    this.#auth = { authorization: `Bearer ${options.token}` }
    this.#ledger = options.ledger
    this.#seeded = options.seeded
    // Seeded per client, so that a failing run can be replayed with the same requests.
    this.#random = new Random(options.name * 7919 + 17)
  }

  /** Issues the next request of the mix; resolves when it is answered (never rejects). */
  async step(): Promise<Sample> {
    const slot = CYCLE[this.#position++ % CYCLE.length]!
    const kind = slot === 'write' ? WRITES[this.#writes++ % WRITES.length]! : slot
    const at = performance.now()
    switch (kind) {
      case 'get':
        return this.#read(kind, at, `/v3/beneficiaries/${this.#anyId()}`)
      case 'list':
        return this.#read(kind, at, `/v3/beneficiaries?${this.#pick(LISTS)}`)
      case 'search':
        return this.#read(
          kind,
          at,
          `/v3/beneficiaries?search=${encodeURIComponent(this.#pick(SEARCHES))}`,
        )
      case 'filter':
        return this.#read(kind, at, `/v3/beneficiaries?${this.#pick(FILTERS)}`)
      default:
        return this.#write(kind, at)
    }
  }

  /** Closes the connection. */
  close(): void {
    this.#connection.close()
  }

  async #read(kind: RequestKind, at: number, path: string): Promise<Sample> {
    const answer = await this.#connection.send({
      method: 'GET',
      path,
      headers: this.#auth,
      readBody: false,
    })
    return sampleOf(kind, at, answer, 200)
  }

  async #write(kind: 'create' | 'update' | 'status', at: number): Promise<Sample> {
    const target = kind === 'create' ? undefined : this.#idleOwnRecord()
    if (target === undefined) return this.#create(at)
    const [id, record] = target
    record.busy = true
    try {
      const out: Outgoing =
        kind === 'update'
          ? {
              method: 'PUT',
              path: `/v3/beneficiaries/${id}`,
              headers: { ...this.#auth, 'if-match': record.etag },
              json: {
                phone: `+39347${this.#digits(7)}`,
                address: {
                  street: `Via Carico ${this.#digits(3)}`,
                  city: 'Pisa',
                  postal_code: '56100',
                  country: 'IT',
                },
                metadata: { client: this.#name, seq: record.writes, note: 'updated under load' },
              },
              readBody: true,
            }
          : {
              method: 'POST',
              path: `/v3/beneficiaries/${id}/status`,
              headers: { ...this.#auth, 'if-match': record.etag },
              json: { status: NEXT_STATUS[String(record.detail['status'])], reason: 'load run' },
              readBody: true,
            }
      const answer = await this.#connection.send(out)
      const sample = sampleOf(kind, at, answer, 200)
      if (sample.failure === undefined) {
        record.detail = JSON.parse(answer.body!) as Record<string, unknown>
        record.etag = String(answer.headers['etag'])
        record.writes += 1
      }
      return sample
    } finally {
      record.busy = false
    }
  }

  async #create(at: number): Promise<Sample> {
    const fields = {
      first_name: `Carico${this.#name}`,
      last_name: this.#pick(['Rossi', 'Bianchi', 'Ferrari', 'Romano', 'Carichi']),
      email: `load.${this.#name}.${this.#digits(6)}@example.org`,
      phone: `+39333${this.#digits(7)}`,
      date_of_birth: `19${50 + Math.floor(this.#random.next() * 50)}-0${1 + Math.floor(this.#random.next() * 9)}-1${Math.floor(this.#random.next() * 9)}`,
      fiscal_code: null,
      address: { street: 'Via Roma 1', city: 'Roma', postal_code: '00184', country: 'IT' },
      metadata: { client: this.#name, source: 'load' },
    }
    const answer = await this.#connection.send({
      method: 'POST',
      path: '/v3/beneficiaries',
      headers: this.#auth,
      json: fields,
      readBody: true,
    })
    const sample = sampleOf('create', at, answer, 201)
    if (sample.failure === undefined) {
      const created = JSON.parse(answer.body!) as { id: number; created_at: string }
      this.#ledger.set(created.id, {
        detail: {
          id: created.id,
          ...fields,
          status: 'pending',
          created_at: created.created_at,
          updated_at: created.created_at,
        },
        etag: String(answer.headers['etag']),
        writes: 1,
        busy: false,
      })
      this.#own.push(created.id)
    }
    return sample
  }

  #idleOwnRecord(): [number, AcknowledgedRecord] | undefined {
    for (let tries = 0; tries < 3 && this.#own.length > 0; tries++) {
      const id = this.#own[Math.floor(this.#random.next() * this.#own.length)]!
      const record = this.#ledger.get(id)!
      if (!record.busy) return [id, record]
    }
    return undefined
  }

  #anyId(): number {
    if (this.#own.length > 0 && this.#random.next() < 0.3) {
      return this.#own[Math.floor(this.#random.next() * this.#own.length)]!
    }
    return this.#seeded.firstId + Math.floor(this.#random.next() * this.#seeded.count)
  }

  #pick<T>(choices: readonly T[]): T {
    return this.#random.pick(choices)
  }

  #digits(count: number): string {
    return String(Math.floor(this.#random.next() * 10 ** count)).padStart(count, '0')
  }
}

function sampleOf(kind: RequestKind, at: number, answer: Exchange, expected: number): Sample {
  let failure: string | undefined
  if (answer.error !== undefined) failure = `${kind}: ${answer.error.message}`
  else if (answer.status !== expected) {
    failure = `${kind}: ${answer.status} ${answer.body?.slice(0, 200) ?? ''}`
  }
  return { kind, at, ms: answer.ms, status: answer.status, failure }
}
