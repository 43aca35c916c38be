/**
 * A package the host application installs for one part of this library (an optional peer
 * dependency in `package.json`): a storage driver, the query builder of the SQL adapters, the
 * HTTP framework of the `uws` transport.
 */
export interface PeerPackage {
  /** The name the host installs, as in `npm install <name>`. */
  readonly name: string
  /** The versions this release is tested with: its range in `peerDependencies`. */
  readonly range: string
}

/**
 * A part of the library was loaded without a package it needs, which the host application
 * installs itself: `beneficiary-service/sqlite` without `better-sqlite3` or `kysely`, the
 * PostgreSQL storage without `pg`, the `uws` transport without `hyper-express`. The message
 * names every package that part needs and the command that installs them.
 *
 * @example
 * try {
 *   await import('beneficiary-service/sqlite')
 * } catch (error) {
 *   if (error instanceof MissingPeerDependencyError) console.error(error.message)
 * }
 */
export class MissingPeerDependencyError extends Error {
  /** Stable identifier, as Node.js gives its own errors one. */
  readonly code = 'ERR_MISSING_PEER_DEPENDENCY'
  /** The part of the library that could not load, such as `beneficiary-service/sqlite`. */
  readonly feature: string
  /** Every package that part needs, with the versions it supports. */
  readonly packages: readonly PeerPackage[]
  /** The ones found missing (the module loader reports the first it meets). */
  readonly missing: readonly string[]

  constructor(
    feature: string,
    packages: readonly PeerPackage[],
    missing: readonly string[],
    options: { readonly cause?: unknown; readonly advice?: string } = {},
  ) {
    const names = packages.map((peer) => peer.name)
    const install = packages.map((peer) => `"${peer.name}@${peer.range}"`).join(' ')
    super(
      `${feature} needs ${listed(names)}, which the application installs itself ` +
        `(${listed(missing)} ${missing.length === 1 ? 'is' : 'are'} missing): ` +
        `npm install ${install}${options.advice === undefined ? '' : ` ${options.advice}`}`,
      { cause: options.cause },
    )
    this.name = 'MissingPeerDependencyError'
    this.feature = feature
    this.packages = Object.freeze([...packages])
    this.missing = Object.freeze([...missing])
  }
}

/**
 * Runs `load` (a dynamic import of the modules of `feature`) and turns the module loader's
 * "cannot find package" for one of `packages` into a `MissingPeerDependencyError`. Any other
 * failure, including one inside an installed package, is rethrown as it is.
 *
 * `load` is a function rather than a specifier so that the import is resolved from the
 * caller's module, where the package is looked for.
 *
 * @throws MissingPeerDependencyError when one of `packages` is not installed.
 */
export async function importWithPeers<T>(
  feature: string,
  packages: readonly PeerPackage[],
  load: () => Promise<T>,
  /** Appended to the install command: what else to do, or what to do instead. */
  advice?: string,
): Promise<T> {
  try {
    return await load()
  } catch (error) {
    const missing = packages.map((peer) => peer.name).filter((name) => notFound(error, name))
    if (missing.length === 0) throw error
    throw new MissingPeerDependencyError(feature, packages, missing, {
      cause: error,
      ...(advice !== undefined && { advice }),
    })
  }
}

/**
 * Whether `error` is the module loader's report that `name` is not installed: ESM's
 * `ERR_MODULE_NOT_FOUND` ("Cannot find package 'name'"), or CommonJS's `MODULE_NOT_FOUND`
 * ("Cannot find module 'name'") when an installed package requires it.
 */
function notFound(error: unknown, name: string): boolean {
  if (!(error instanceof Error)) return false
  const code = (error as Error & { code?: unknown }).code
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false
  const firstLine = error.message.split('\n')[0] ?? ''
  return firstLine.includes(`'${name}'`) || firstLine.includes(`'${name}/`)
}

function listed(names: readonly string[]): string {
  if (names.length <= 1) return names.join('')
  return `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`
}
