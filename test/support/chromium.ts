import { existsSync } from 'node:fs'

/** Debian's chromium; `.ci/run` installs it. */
export const CHROMIUM = '/usr/bin/chromium'
/** The flags this machine's closed network and root user need. */
export const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]
/** How long one step of a browser test may take. */
export const STEP_MS = 20_000

/**
 * Why a browser test cannot run here (`skip`'s reason), or `undefined`. Under `CI=true` a missing
 * chromium throws instead: `what` must run there.
 */
export function chromiumMissing(what: string): string | undefined {
  if (existsSync(CHROMIUM)) return undefined
  const missing = `chromium is not installed at ${CHROMIUM} (apt-get install chromium)`
  if (process.env['CI'] === 'true') throw new Error(`${missing}: under CI=true ${what} must run`)
  return missing
}
