import type BetterSqlite3 from 'better-sqlite3'
import { Worker } from 'node:worker_threads'
import { CHECKPOINT_STOP, type CheckpointWorkerData } from './sqlite-checkpoint-schedule.js'

/**
 * The writer's own automatic checkpoint threshold while the thread runs, in pages (64 MiB at
 * 4 KiB pages): a safety net for a WAL that the thread cannot bring back to its start, not the
 * usual path. SQLite's default, 1000 pages, comes back if the thread stops on its own.
 */
export const SAFETY_NET_PAGES = 16_384
const SQLITE_DEFAULT_AUTOCHECKPOINT_PAGES = 1_000

/**
 * Checkpoints a WAL database from a thread of its own, with its own connection, so that the
 * connection that writes never does. A checkpoint copies the WAL's pages into the database file
 * and fsyncs it; run by the writer, as SQLite does by default every 1000 pages, it blocks the
 * event loop for tens of milliseconds, and hundreds when the disk is busy writing them back (the
 * benchmark's updates: a third of the wall time, and a p99 of 400–860 ms). The thread runs
 * `PRAGMA wal_checkpoint(PASSIVE)`, which neither waits for nor blocks the writer and the
 * readers, every 5 ms while the WAL has pages not yet copied and every 100 ms otherwise. Once
 * it has copied them all, the next write starts the WAL over from its beginning.
 *
 * The writer keeps an automatic checkpoint at {@link SAFETY_NET_PAGES}, and SQLite's default
 * if the thread ends on its own (it only ends when stopped, or on a failure to start it).
 */
export class SqliteCheckpointer {
  readonly #control = new SharedArrayBuffer(4)
  readonly #worker: Worker
  readonly #exited: Promise<void>
  #stopping = false
  #running = true

  /**
   * Starts the thread for the file of `db` (a WAL database, not `:memory:`).
   * @param setWriterPragma Sets a pragma on the connection that writes when it is not `db` (the
   * writer thread's, which copies `db`'s at start): told SQLite's default threshold back if the
   * thread ends on its own.
   * @throws TypeError for an in-memory database.
   */
  constructor(
    db: BetterSqlite3.Database,
    setWriterPragma: (name: string, value: number) => void = () => {},
  ) {
    if (db.memory) throw new TypeError('an in-memory database has no WAL to checkpoint')
    const pageSize = Number(db.pragma('page_size', { simple: true }))
    db.pragma(`wal_autocheckpoint = ${SAFETY_NET_PAGES}`)
    // A WAL that grew past the safety net while the thread was behind shrinks back afterwards.
    db.pragma(`journal_size_limit = ${SAFETY_NET_PAGES * pageSize}`)
    const workerData: CheckpointWorkerData = { path: db.name, control: this.#control }
    this.#worker = new Worker(new URL('./sqlite-checkpoint-worker.js', import.meta.url), {
      workerData,
    })
    // The thread never keeps a process alive: killed mid-checkpoint, SQLite loses nothing.
    this.#worker.unref()
    this.#exited = new Promise((resolve) => {
      this.#worker.once('exit', () => {
        this.#running = false
        if (!this.#stopping && db.open) {
          db.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_AUTOCHECKPOINT_PAGES}`)
          setWriterPragma('wal_autocheckpoint', SQLITE_DEFAULT_AUTOCHECKPOINT_PAGES)
        }
        resolve()
      })
    })
    // A thread that fails (the file went away, a native module that cannot load in a worker)
    // ends with 'exit' too; the writer is back on its own automatic checkpoints.
    this.#worker.on('error', () => {})
  }

  /** Whether the thread is still running. */
  get running(): boolean {
    return this.#running
  }

  /** Stops the thread after its current checkpoint, and closes its connection. */
  async stop(): Promise<void> {
    this.#stopping = true
    // Waited for: the process must not end (its event loop empty) before the thread has.
    this.#worker.ref()
    const word = new Int32Array(this.#control)
    Atomics.store(word, 0, CHECKPOINT_STOP)
    Atomics.notify(word, 0)
    await this.#exited
  }
}
