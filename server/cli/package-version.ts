import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const PACKAGE_NAME = 'beneficiary-service'

/**
 * The version of the installed package, read from its own `package.json` when asked, not
 * compiled in: the nearest file of that name above `from` (this module, by default) whose
 * `name` is the package's. The same code answers from a clone (`dist/` below the project) and
 * from an installed package (`node_modules/beneficiary-service/dist/`).
 *
 * @throws Error when no such file is found above `from`.
 */
export function packageVersion(from: string = import.meta.url): string {
  const start = dirname(fileURLToPath(from))
  for (let folder = start; ; folder = dirname(folder)) {
    const manifest = readManifest(join(folder, 'package.json'))
    if (manifest?.name === PACKAGE_NAME && typeof manifest.version === 'string') {
      return manifest.version
    }
    if (dirname(folder) === folder) break
  }
  throw new Error(`no package.json of ${PACKAGE_NAME} above ${start}`)
}

function readManifest(path: string): { name?: unknown; version?: unknown } | undefined {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch {
    return undefined
  }
  try {
    return JSON.parse(text) as { name?: unknown; version?: unknown }
  } catch {
    return undefined
  }
}
