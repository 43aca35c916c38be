/** What the background checkpointer's thread is given (see `SqliteCheckpointer`). */
export interface CheckpointWorkerData {
  /** The database file. */
  readonly path: string
  /** One Int32: 0 while running, `CHECKPOINT_STOP` once asked to stop (and notified). */
  readonly control: SharedArrayBuffer
}

/** The control word's value that stops the checkpointer's thread. */
export const CHECKPOINT_STOP = 1

/**
 * Milliseconds between checkpoints while the WAL holds frames not yet in the database file, or
 * has changed since the last checkpoint (writes keep coming).
 */
export const BEHIND_PAUSE_MS = 5
/** Milliseconds between checkpoints once every frame is in the database file and none came since. */
export const IDLE_PAUSE_MS = 100
/** Milliseconds before trying again after a checkpoint failed. */
export const FAILED_PAUSE_MS = 1_000

/** What `PRAGMA wal_checkpoint` answers. */
export interface CheckpointOutcome {
  readonly busy: number
  /** Frames in the WAL. */
  readonly log: number
  /** Frames of the WAL already copied into the database file. */
  readonly checkpointed: number
}

/**
 * How long to wait before the next checkpoint, from the last one's outcome (`undefined` when it
 * failed) and whether another connection committed since the one before: soon while writes keep adding frames, so that the WAL is soon all
 * copied and the next write can start it over; slowly when there is nothing to copy.
 *
 * A checkpoint that caught up while writes go on is followed by another 5 ms later, not 100:
 * with 100, one commit in a hundred took 105–125 ms under the benchmark's updates (its p99),
 * behind a large checkpoint's fsync or in the writer's own safety-net checkpoint; with 5, at
 * most about 20 ms, for more copying (pages written by every group, such as the ends of the
 * indexes, are copied at every pass).
 */
export function nextCheckpointPause(
  outcome: CheckpointOutcome | undefined,
  written = false,
): number {
  if (outcome === undefined) return FAILED_PAUSE_MS
  const caughtUp = outcome.busy === 0 && outcome.checkpointed >= outcome.log
  return caughtUp && !written ? IDLE_PAUSE_MS : BEHIND_PAUSE_MS
}
