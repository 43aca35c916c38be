import type {
  ImportJob,
  ImportJobCounts,
  ImportJobStore,
  LeasedImportJob,
  NewImportJob,
  StoredOutcome,
} from '../../core/ports/import-job-store.js'

interface Kept {
  job: ImportJob
  file: Uint8Array
  owner: string | null
  until: number | null
  readonly outcomes: Map<number, string>
}

/** Import jobs in memory: gone with the process, for tests and host applications' own. */
export class MemoryImportJobStore implements ImportJobStore {
  readonly #jobs = new Map<string, Kept>()
  readonly #assertOpen: () => void

  constructor(assertOpen: () => void) {
    this.#assertOpen = assertOpen
  }

  async create(job: NewImportJob): Promise<ImportJob> {
    this.#assertOpen()
    const stored: ImportJob = Object.freeze({
      id: job.id,
      clientId: job.clientId,
      requestId: job.requestId,
      format: job.format,
      ignoreAssigned: job.ignoreAssigned,
      state: 'queued',
      counts: Object.freeze({ rows: 0, created: 0, existing: 0, refused: 0 }),
      error: null,
      createdAt: job.createdAt,
      updatedAt: job.createdAt,
      finishedAt: null,
    })
    this.#jobs.set(job.id, {
      job: stored,
      file: job.file.slice(),
      owner: null,
      until: null,
      outcomes: new Map(),
    })
    return stored
  }

  async get(id: string): Promise<ImportJob | undefined> {
    this.#assertOpen()
    return this.#jobs.get(id)?.job
  }

  async outcomes(
    id: string,
    offset: number,
    limit: number,
  ): Promise<{ items: StoredOutcome[]; total: number }> {
    this.#assertOpen()
    const kept = this.#jobs.get(id)
    if (kept === undefined) return { items: [], total: 0 }
    const rows = [...kept.outcomes.keys()].sort((a, b) => a - b)
    const items = rows
      .slice(offset, offset + limit)
      .map((row) => ({ row, json: kept.outcomes.get(row)! }))
    return { items, total: rows.length }
  }

  async lease(owner: string, now: number, leaseMs: number): Promise<LeasedImportJob | undefined> {
    this.#assertOpen()
    const waiting = [...this.#jobs.values()]
      .filter(
        (kept) =>
          (kept.job.state === 'queued' || kept.job.state === 'running') &&
          (kept.until === null || kept.until <= now),
      )
      .sort((a, b) => a.job.createdAt - b.job.createdAt || (a.job.id < b.job.id ? -1 : 1))[0]
    if (waiting === undefined) return undefined
    waiting.owner = owner
    waiting.until = now + leaseMs
    waiting.job = Object.freeze({ ...waiting.job, state: 'running', updatedAt: now })
    return { job: waiting.job, file: waiting.file }
  }

  async progress(
    id: string,
    owner: string,
    outcomes: readonly StoredOutcome[],
    counts: ImportJobCounts,
    now: number,
    leaseMs: number,
  ): Promise<boolean> {
    this.#assertOpen()
    const kept = this.#held(id, owner)
    if (kept === undefined) return false
    kept.until = now + leaseMs
    for (const { row, json } of outcomes) kept.outcomes.set(row, json)
    kept.job = Object.freeze({ ...kept.job, counts: Object.freeze({ ...counts }), updatedAt: now })
    return true
  }

  async finish(
    id: string,
    owner: string,
    state: 'done' | 'failed',
    error: string | null,
    now: number,
  ): Promise<boolean> {
    this.#assertOpen()
    const kept = this.#held(id, owner)
    if (kept === undefined) return false
    kept.owner = null
    kept.until = null
    kept.file = new Uint8Array(0)
    kept.job = Object.freeze({ ...kept.job, state, error, updatedAt: now, finishedAt: now })
    return true
  }

  #held(id: string, owner: string): Kept | undefined {
    const kept = this.#jobs.get(id)
    return kept !== undefined && kept.owner === owner && kept.job.state === 'running'
      ? kept
      : undefined
  }
}
