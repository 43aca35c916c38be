import type BetterSqlite3 from 'better-sqlite3'
import { Worker } from 'node:worker_threads'
import { StorageUnavailableError } from '../../../core/errors.js'
import { cacheSizeKibOf } from '../sqlite-pragmas.js'
import type { GroupCommitListener } from '../writes/sqlite-group-commit.js'
import {
  type CreatedOrClaimed,
  fromWire,
  type FromWriter,
  type SqliteWrites,
  type ToWriter,
  type WriteCall,
  type WireError,
  type WriteMethod,
  type WriterSettings,
  type WriterWorkerData,
} from './sqlite-writer-protocol.js'

/** The body of the thread, compiled beside this file. */
const WORKER_URL = new URL('./sqlite-writer-worker.js', import.meta.url)

/** The pragmas of the calling thread's connection that the writer's connection copies. */
const COPIED_PRAGMAS = [
  'busy_timeout',
  'synchronous',
  'foreign_keys',
  'temp_store',
  'wal_autocheckpoint',
  'journal_size_limit',
  'secure_delete',
] as const

/**
 * The writer's page cache, in KiB: at most the calling connection's. It holds what writes
 * descend through (the upper levels of the table and of its indexes); the pages they change
 * are read from the OS cache on this thread, off the event loop. Measured under the
 * benchmark's gets, creates and updates, the server's peak resident set was 321 MiB with a
 * 16 MiB cache here, 279 MiB with 4 MiB and 271 MiB with 2 MiB (255 MiB with no writer thread);
 * the CPU per write did not move out of the noise between 2 and 64 MiB.
 */
const WRITER_CACHE_KIB = 4_096

interface Pending {
  readonly resolve: (value: unknown) => void
  readonly reject: (error: unknown) => void
}

/** One run of the thread: its worker, the calls it has not answered, those not yet sent. */
interface Run {
  readonly worker: Worker
  readonly ready: Promise<WriterSettings>
  readonly pending: Map<number, Pending>
  batch: WriteCall[]
  /** Why it ended, once it did. */
  ended: StorageUnavailableError | undefined
}

/**
 * Runs every write of a storage on a thread of its own (`writer: 'thread'`), with its own
 * connection to the file, so that the calling thread, the event loop of a server, never waits
 * for a write, its commit, its fsync, or a checkpoint the commit runs: reads go on meanwhile on
 * the calling thread's connection (WAL). The thread runs the storage's own code (see
 * `sqlite-writer-worker.ts`): group commit, one fsync per group under `synchronous=FULL`, each
 * write in its savepoint, the same statements and errors.
 *
 * The calls of one turn of the event loop leave together, in one message; the thread answers
 * each group's writes in one message once its COMMIT returned. Before settling them, `committed`
 * is called (the storage forgets what it remembered of the data: the next read sees the writes).
 *
 * When the thread ends on its own (a crash, or it could not open the file), every write it had
 * not answered fails with `StorageUnavailableError` (`io_error`), as a storage fault does; the
 * next call starts a new thread. A write the thread committed before ending may be among them,
 * as when the process itself crashes.
 */
export class SqliteWriterThread implements SqliteWrites {
  readonly #db: BetterSqlite3.Database
  readonly #committed: () => void
  readonly #workerUrl: URL
  #run: Run | undefined
  #nextId = 0
  #listener: GroupCommitListener | undefined
  #closing = false

  /**
   * Starts the thread for the file of `db` (a WAL database, not `:memory:`), with `db`'s pragmas.
   * @param committed Called before the replies of each message are settled.
   * @param workerUrl The body of the thread: `sqlite-writer-worker.js`, or a test's stand-in.
   * @throws TypeError for an in-memory database.
   */
  constructor(db: BetterSqlite3.Database, committed: () => void, workerUrl: URL = WORKER_URL) {
    if (db.memory) throw new TypeError('an in-memory database cannot be shared with a thread')
    this.#db = db
    this.#committed = committed
    this.#workerUrl = workerUrl
    this.#run = this.#start()
  }

  /** Whether a thread is running (or starting). */
  get running(): boolean {
    return this.#run !== undefined && this.#run.ended === undefined
  }

  /** Has `listener` told the size of every group the thread commits; replaces the last. */
  observe(listener: GroupCommitListener): void {
    this.#listener = listener
  }

  /**
   * Resolves once a thread is ready to write (the one running, or a new one if it ended), with
   * the settings of its connection.
   * @throws StorageUnavailableError when the thread could not start.
   */
  ready(): Promise<WriterSettings> {
    return this.#current().ready
  }

  /** Sets a pragma on the writer's connection (the checkpointer gives the writer its default back). */
  pragma(name: string, value: number): void {
    const run = this.#run
    if (run !== undefined && run.ended === undefined)
      this.#post(run, { kind: 'pragma', name, value })
  }

  createBeneficiary(
    ...args: Parameters<SqliteWrites['createBeneficiary']>
  ): Promise<CreatedOrClaimed> {
    return this.#call('createBeneficiary', args) as Promise<CreatedOrClaimed>
  }

  updateBeneficiary(...args: Parameters<SqliteWrites['updateBeneficiary']>) {
    return this.#call('updateBeneficiary', args) as ReturnType<SqliteWrites['updateBeneficiary']>
  }

  removeBeneficiary(...args: Parameters<SqliteWrites['removeBeneficiary']>) {
    return this.#call('removeBeneficiary', args) as ReturnType<SqliteWrites['removeBeneficiary']>
  }

  runStatements(...args: Parameters<SqliteWrites['runStatements']>): Promise<number[]> {
    return this.#call('runStatements', args) as Promise<number[]>
  }

  /**
   * Sends the calls not sent yet, waits until the thread has answered every one of them, closed
   * its connection and ended. Later calls reject. Closing twice is harmless.
   */
  async close(): Promise<void> {
    this.#closing = true
    const run = this.#run
    if (run === undefined || run.ended !== undefined) return
    this.#send(run)
    // Waited for: the process must not end (its event loop empty) before the thread has.
    run.worker.ref()
    const exited = new Promise<void>((resolve) => run.worker.once('exit', () => resolve()))
    this.#post(run, { kind: 'close' })
    await exited
  }

  #call(method: WriteMethod, args: readonly unknown[]): Promise<unknown> {
    if (this.#closing) return Promise.reject(new Error('storage is closed'))
    const run = this.#current()
    return new Promise((resolve, reject) => {
      const id = this.#nextId++
      // A thread with calls to answer keeps the process alive, as a pending write inline does.
      if (run.pending.size === 0) run.worker.ref()
      run.pending.set(id, { resolve, reject })
      // After the I/O of this turn: every request read in it goes in the same message.
      if (run.batch.length === 0) setImmediate(() => this.#send(run))
      run.batch.push([id, method, args])
    })
  }

  /** The thread running, or a new one when the last one ended. */
  #current(): Run {
    let run = this.#run
    if (run === undefined || run.ended !== undefined) {
      run = this.#start()
      this.#run = run
    }
    return run
  }

  #send(run: Run): void {
    if (run.batch.length === 0 || run.ended !== undefined) return
    const calls = run.batch
    run.batch = []
    try {
      this.#post(run, { kind: 'calls', calls })
    } catch {
      // A value that cannot be cloned (a function, a symbol) fails its own call, not the others.
      for (const call of calls) {
        try {
          this.#post(run, { kind: 'calls', calls: [call] })
        } catch (error) {
          run.pending.get(call[0])?.reject(error)
          run.pending.delete(call[0])
        }
      }
      if (run.pending.size === 0 && !this.#closing) run.worker.unref()
    }
  }

  #post(run: Run, message: ToWriter): void {
    run.worker.postMessage(message)
  }

  #start(): Run {
    const db = this.#db
    const pragmas: [string, number][] = COPIED_PRAGMAS.map((name) => [
      name,
      Number(db.pragma(name, { simple: true })),
    ])
    pragmas.push(['cache_size', -Math.min(cacheSizeKibOf(db), WRITER_CACHE_KIB)])
    const workerData: WriterWorkerData = { path: db.name, pragmas }
    const worker = new Worker(this.#workerUrl, { workerData })
    // A thread starting or with calls to answer keeps the process alive; an idle one does not.
    let ready!: (settings: WriterSettings) => void
    let failed!: (error: unknown) => void
    const run: Run = {
      worker,
      ready: new Promise<WriterSettings>((resolve, reject) => {
        ready = resolve
        failed = reject
      }),
      pending: new Map(),
      batch: [],
      ended: undefined,
    }
    // Rejections of `ready` that nobody awaits are not unhandled: the calls say why too.
    run.ready.catch(() => {})
    let cause: unknown
    worker.on('error', (error) => {
      cause = error
    })
    worker.on('message', (message: FromWriter) => {
      if (message.kind === 'ready') {
        ready(message.settings)
        if (run.pending.size === 0 && !this.#closing) worker.unref()
      } else this.#settle(run, message.replies, message.groups)
    })
    worker.once('exit', (code) => {
      const ended = new StorageUnavailableError('io_error', {
        cause: cause ?? new Error(`the SQLite writer thread ended (exit code ${code})`),
      })
      run.ended = ended
      failed(ended)
      for (const pending of run.pending.values()) pending.reject(ended)
      run.pending.clear()
    })
    return run
  }

  #settle(
    run: Run,
    replies: Extract<FromWriter, { kind: 'replies' }>['replies'],
    groups: readonly number[],
  ): void {
    this.#committed()
    for (const [id, ok, value] of replies) {
      const pending = run.pending.get(id)
      if (pending === undefined) continue
      run.pending.delete(id)
      if (ok === 1) pending.resolve(value)
      else pending.reject(fromWire(value as WireError))
    }
    if (run.pending.size === 0 && !this.#closing) run.worker.unref()
    for (let i = 0; i < groups.length; i += 2) {
      try {
        this.#listener?.(groups[i]!, groups[i + 1] === 1)
      } catch {
        // An observer's fault is not the writes': they are settled already.
      }
    }
  }
}
