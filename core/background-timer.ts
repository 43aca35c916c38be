/** A timer as the host gives it; Node.js's has `unref`, which browsers' and others' lack. */
export interface TimerHandle {
  unref?(): unknown
}

/** The host's timers: the core is built without Node.js's types (`core/tsconfig.json`). */
const timers = globalThis as unknown as {
  setTimeout(callback: () => void, ms: number): TimerHandle
  clearTimeout(handle: TimerHandle | undefined): void
}

/**
 * Calls `callback` once after `ms`, on a timer that does not keep a Node.js process alive: for
 * the core's background work (the access log's batches, the retention's purge), which whoever
 * owns it stops or finishes on close. `keepAlive` keeps it alive instead, for a timer a caller
 * awaits (a request waiting for room in the access log).
 */
export function startBackgroundTimer(
  callback: () => void,
  ms: number,
  keepAlive = false,
): TimerHandle {
  const handle = timers.setTimeout(callback, ms)
  if (!keepAlive) handle.unref?.()
  return handle
}

/** Cancels a timer of {@link startBackgroundTimer}; `undefined` or a fired one is ignored. */
export function stopBackgroundTimer(handle: TimerHandle | undefined): void {
  timers.clearTimeout(handle)
}
