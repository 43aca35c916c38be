/**
 * A part of the service that may fail without stopping it (the shared rate-limit store, D31):
 * `/readyz` asks it, and while it fails answers 200 `degraded`, naming it, rather than `ready`.
 */
export interface ReadinessCheck {
  /** The name `/readyz` lists under `degraded` while the part fails, such as `rate_limits`. */
  readonly name: string
  /** Resolves `true` while the part works; a rejection counts as `false`. */
  check(): Promise<boolean>
}

const READY_BODY = JSON.stringify({ status: 'ready' })

/**
 * The body of a 200 `/readyz`, once the database has answered: `{"status":"ready"}` when every
 * check passes, else `{"status":"degraded","degraded":[names]}`. Still a 200, on purpose: an
 * instance serving on its fallback must stay behind the load balancer.
 */
export async function readinessBody(checks: readonly ReadinessCheck[]): Promise<string> {
  if (checks.length === 0) return READY_BODY
  const working = await Promise.all(checks.map((part) => part.check().catch(() => false)))
  const degraded = checks.filter((_, i) => !working[i]).map((part) => part.name)
  return degraded.length === 0 ? READY_BODY : JSON.stringify({ status: 'degraded', degraded })
}
