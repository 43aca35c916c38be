/** What the background checkpointer's thread is given (see `SqliteCheckpointer`). */
export interface CheckpointWorkerData {
  /** The database file. */
  readonly path: string
  /** One Int32: 0 while running, `CHECKPOINT_STOP` once asked to stop (and notified). */
  readonly control: SharedArrayBuffer
}

/** The control word's value that stops the checkpointer's thread. */
export const CHECKPOINT_STOP = 1

/** Milliseconds between checkpoints while the WAL holds frames not yet in the database file. */
export const BEHIND_PAUSE_MS = 5
/** Milliseconds between checkpoints once every frame is in the database file. */
export const IDLE_PAUSE_MS = 100
/** Milliseconds before trying again after a checkpoint failed. */
export const FAILED_PAUSE_MS = 1_000

/**
 * How long to wait before the next checkpoint, from the last one's outcome (`undefined` when it
 * failed): soon while writes keep adding frames, so that the WAL is soon all copied and the next
 * write can start it over; slowly when there is nothing to copy.
 */
export function nextCheckpointPause(
  outcome:
    { readonly busy: number; readonly log: number; readonly checkpointed: number } | undefined,
): number {
  if (outcome === undefined) return FAILED_PAUSE_MS
  return outcome.busy === 0 && outcome.checkpointed >= outcome.log ? IDLE_PAUSE_MS : BEHIND_PAUSE_MS
}
