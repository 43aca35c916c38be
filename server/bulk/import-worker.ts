import { Readable } from 'node:stream'
import { randomToken } from '../../core/crypto.js'
import { StorageUnavailableError } from '../../core/errors.js'
import type { Clock } from '../../core/ports/clock.js'
import type { ImportJobCounts, LeasedImportJob } from '../../core/ports/import-job-store.js'
import type { Storage } from '../../core/ports/storage.js'
import { systemClock } from '../../core/system-clock.js'
import { nodeSha256 } from '../node-sha256.js'
import { ImportFileError, importRows, type ImportRow } from './import-rows.js'
import { RowImporter } from './row-importer.js'
import { DEFAULT_IMPORT_BATCH, runImport } from './run-import.js'

/** How an `ImportWorker` runs. */
export interface ImportWorkerOptions {
  readonly storage: Storage
  /** Where time comes from (leases). Default: the system clock. */
  readonly clock?: Clock
  /** How long a lease holds without being renewed. Default 30 s. */
  readonly leaseMs?: number
  /** How often an idle worker looks for a job. Default 1 s. */
  readonly pollMs?: number
  /** Rows written together. Default 1,000. */
  readonly batchSize?: number
  /** Told of each job that ends or stops, without personal data. */
  readonly onJob?: (event: ImportJobEvent) => void
}

/** What became of a job a worker ran. */
export interface ImportJobEvent {
  readonly id: string
  readonly state: 'done' | 'failed' | 'stopped' | 'lost'
  readonly counts: ImportJobCounts
}

/** The lease lost midway: another instance has the job now. */
class LeaseLost extends Error {}

/**
 * Runs the import jobs stored by `POST /imports` (D39), one at a time, on whichever instance
 * leases a job first: the lease is renewed with every batch, and a job whose instance stopped
 * is taken over once its lease runs out. A job resumed after the rows it already reported: its
 * rows are claimed under the job's id as they are created, so a row written just before a stop
 * is reported `existing`, never created twice.
 */
export class ImportWorker {
  readonly #storage: Storage
  readonly #clock: Clock
  readonly #leaseMs: number
  readonly #pollMs: number
  readonly #batchSize: number
  readonly #onJob: (event: ImportJobEvent) => void
  /** This worker's name in the leases it takes. */
  readonly owner = `worker-${randomToken(9)}`
  #timer: NodeJS.Timeout | undefined
  #running: Promise<boolean> | undefined
  #stopping = false

  constructor(options: ImportWorkerOptions) {
    this.#storage = options.storage
    this.#clock = options.clock ?? systemClock
    this.#leaseMs = options.leaseMs ?? 30_000
    this.#pollMs = options.pollMs ?? 1_000
    this.#batchSize = options.batchSize ?? DEFAULT_IMPORT_BATCH
    this.#onJob = options.onJob ?? (() => {})
  }

  /** Starts looking for jobs every `pollMs`; nothing when the storage keeps none. */
  start(): void {
    if (this.#storage.imports === undefined || this.#timer !== undefined) return
    this.#timer = setInterval(() => {
      if (this.#running !== undefined) return
      this.#running = this.runOnce()
        .catch(() => false)
        .finally(() => (this.#running = undefined))
    }, this.#pollMs)
    this.#timer.unref()
  }

  /** Stops looking, and stops the job it runs after its batch in flight (its lease lapses). */
  async stop(): Promise<void> {
    this.#stopping = true
    clearInterval(this.#timer)
    this.#timer = undefined
    await this.#running
  }

  /**
   * Leases one job and runs it to its end (or until the worker stops or loses the lease).
   * Resolves `true` when there was a job.
   */
  async runOnce(): Promise<boolean> {
    const imports = this.#storage.imports
    if (imports === undefined) return false
    const leased = await imports.lease(this.owner, this.#clock.now(), this.#leaseMs)
    if (leased === undefined) return false
    await this.#run(leased)
    return true
  }

  async #run({ job, file }: LeasedImportJob): Promise<void> {
    const imports = this.#storage.imports!
    const done = job.counts
    let counts: ImportJobCounts = done
    const importer = new RowImporter(this.#storage.beneficiaries, this.#clock, nodeSha256, {
      importId: job.id,
      clientId: job.clientId,
      requestId: job.requestId,
    })
    // A view of the file, not a copy: it may be tens of MiB.
    const bytes = Buffer.from(file.buffer, file.byteOffset, file.byteLength)
    const rows = importRows(Readable.from(slices(bytes)), {
      format: job.format,
      ignoreAssigned: job.ignoreAssigned,
    })
    try {
      await runImport(
        after(rows, done.rows),
        importer,
        {
          outcomes: async (outcomes, run) => {
            counts = {
              rows: done.rows + run.rows,
              created: done.created + run.created,
              existing: done.existing + run.existing,
              refused: done.refused + run.refused,
            }
            const kept = await imports.progress(
              job.id,
              this.owner,
              outcomes.map((outcome) => ({ row: outcome.row, json: JSON.stringify(outcome) })),
              counts,
              this.#clock.now(),
              this.#leaseMs,
            )
            if (!kept) throw new LeaseLost()
            if (this.#stopping) throw new StorageUnavailableError('busy')
          },
        },
        this.#batchSize,
      )
      const finished = await imports.finish(job.id, this.owner, 'done', null, this.#clock.now())
      this.#onJob({ id: job.id, state: finished ? 'done' : 'lost', counts })
    } catch (error) {
      if (error instanceof LeaseLost) {
        this.#onJob({ id: job.id, state: 'lost', counts })
      } else if (error instanceof StorageUnavailableError) {
        // Left to its lease: this or another instance takes it again once the lease runs out.
        this.#onJob({ id: job.id, state: 'stopped', counts })
      } else {
        const reason =
          error instanceof ImportFileError ? error.message : 'the import failed unexpectedly'
        await imports.finish(job.id, this.owner, 'failed', reason, this.#clock.now())
        this.#onJob({ id: job.id, state: 'failed', counts })
      }
    }
  }
}

/** `rows` after the first `skip`: those a run before this one reported. */
async function* after(rows: AsyncIterable<ImportRow>, skip: number): AsyncGenerator<ImportRow> {
  let seen = 0
  for await (const row of rows) {
    if (seen++ < skip) continue
    yield row
  }
}

/** `bytes` in views of 256 KiB: the reader decodes and parses a slice at a time. */
function* slices(bytes: Buffer): Generator<Buffer> {
  for (let at = 0; at < bytes.byteLength; at += 256 * 1024) {
    yield bytes.subarray(at, at + 256 * 1024)
  }
}
