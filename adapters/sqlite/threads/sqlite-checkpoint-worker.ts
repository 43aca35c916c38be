/**
 * The body of the background checkpointer's thread (see `SqliteCheckpointer`): its own
 * connection to the file, running `PRAGMA wal_checkpoint(PASSIVE)` (which never waits for, nor
 * blocks, the writer or the readers) until asked to stop through the shared control word.
 */
import Database from 'better-sqlite3'
import { workerData } from 'node:worker_threads'
import {
  CHECKPOINT_STOP,
  type CheckpointOutcome,
  type CheckpointWorkerData,
  nextCheckpointPause,
} from './sqlite-checkpoint-schedule.js'

const { path, control } = workerData as CheckpointWorkerData
const word = new Int32Array(control)
const db = new Database(path, { fileMustExist: true })
try {
  const checkpoint = db.prepare<[], CheckpointOutcome>('PRAGMA wal_checkpoint(PASSIVE)')
  // Changes when another connection has committed: writes keep coming.
  const dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck()
  let version = dataVersion.get()
  while (Atomics.load(word, 0) !== CHECKPOINT_STOP) {
    let pause: number
    try {
      const outcome = checkpoint.get()
      const seen = dataVersion.get()
      pause = nextCheckpointPause(outcome, seen !== version)
      version = seen
    } catch {
      // A busy lock, a full disk: the writer's own safety net covers it, try again later.
      pause = nextCheckpointPause(undefined)
    }
    Atomics.wait(word, 0, 0, pause)
  }
} finally {
  db.close()
}
