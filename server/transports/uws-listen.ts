import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { access } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { createServer } from 'node:net'
import { dirname, join } from 'node:path'
import type * as HyperExpress from 'hyper-express'
import type { Server } from 'hyper-express'
import {
  importWithPeers,
  MissingPeerDependencyError,
  type PeerPackage,
} from '../../core/missing-peer-dependency-error.js'
import type { TlsFiles } from './transport.js'
import { TransportUnavailableError } from './transport-unavailable-error.js'

/** The hyper-express module, whose `compressors` is uWebSockets.js itself. */
export type HyperExpressModule = typeof HyperExpress

/** A listen socket of uWebSockets.js. */
export type UwsListenSocket = HyperExpress.compressors.us_listen_socket

/**
 * What the uws transport needs the host to install: its `peerDependencies` range in
 * `package.json` (a test holds the two equal).
 */
export const UWS_PEERS: readonly PeerPackage[] = Object.freeze([
  Object.freeze({ name: 'hyper-express', range: '6.18.0' }),
])

/**
 * The uWebSockets.js build hyper-express 6.18 runs on here, as the `overrides` entry of
 * `package.json` (a test holds the two equal): hyper-express asks for uWebSockets.js from a
 * GitHub tag, which npm fetches over git; the same build is published on the registry.
 */
export const UWS_OVERRIDE = Object.freeze({
  'uWebSockets.js': 'npm:@trufflesuite/uws-js-unofficial@20.30.0-unofficial.0',
})

const ADVICE =
  `with "overrides": ${JSON.stringify(UWS_OVERRIDE)} in the application's package.json first ` +
  '(hyper-express 6.18 asks for uWebSockets.js from GitHub); or use the node:http transport ' +
  "(transport: 'node', --transport node)"

/** Why the uws transport cannot run on this Node.js, as `uwsUnavailable` finds it. */
export interface UwsUnavailable {
  /** `missing`: hyper-express is not installed; `no-binary`: its uWebSockets.js build has no binary for this Node.js. */
  readonly kind: 'missing' | 'no-binary'
  /** One sentence, without a full stop, for a log line or an error message. */
  readonly reason: string
}

/**
 * Whether the uws transport can run on this Node.js, found without loading it: hyper-express
 * resolves, and the uWebSockets.js build it resolves ships a binary for this platform and
 * Node.js ABI (`process.versions.modules`; the pinned build covers Node 16–20, ABI 93–115).
 * `undefined` when it can, as far as files tell: a binary that is there but fails to load is
 * found by `loadHyperExpress`. Never loads uWebSockets.js, whose own loader would print a warning
 * and fall back to a JavaScript stand-in that this transport cannot run on.
 *
 * @param modules The Node.js ABI to look for; default this process's.
 */
export function uwsUnavailable(modules = process.versions.modules): UwsUnavailable | undefined {
  const require = createRequire(import.meta.url)
  let hyperExpress: string
  try {
    hyperExpress = require.resolve('hyper-express')
  } catch {
    return { kind: 'missing', reason: 'hyper-express is not installed' }
  }
  let uws: string
  try {
    uws = packageFolder(createRequire(hyperExpress).resolve('uWebSockets.js'))
  } catch {
    return {
      kind: 'missing',
      reason: 'uWebSockets.js, which hyper-express needs, is not installed',
    }
  }
  const prefix = `uws_${process.platform}_${process.arch}_`
  // The official builds keep their binaries beside the loader; the pinned one in binaries/.
  const abis = new Set<string>()
  for (const folder of ['', 'binaries', 'dist']) {
    let names: string[]
    try {
      names = readdirSync(join(uws, folder))
    } catch {
      continue
    }
    for (const name of names) {
      if (name.startsWith(prefix) && name.endsWith('.node')) abis.add(name.slice(prefix.length, -5))
    }
  }
  if (abis.has(modules)) return undefined
  const version = (
    JSON.parse(readFileSync(join(uws, 'package.json'), 'utf8')) as { version?: string }
  ).version
  const lines = [...abis]
    .sort((a, b) => Number(a) - Number(b))
    .map((abi) => (Object.hasOwn(NODE_OF_ABI, abi) ? NODE_OF_ABI[abi] : `ABI ${abi}`))
  return {
    kind: 'no-binary',
    reason:
      `its uWebSockets.js build ${version ?? ''} has no binary for this Node.js (ABI ${modules}); ` +
      (lines.length === 0
        ? `it has none for ${process.platform}-${process.arch}`
        : `it has binaries for Node.js ${lines.join(', ')} on ${process.platform}-${process.arch}`),
  }
}

/** Node.js lines by their ABI version (`process.versions.modules`). */
const NODE_OF_ABI: Readonly<Record<string, string>> = {
  '83': '14',
  '93': '16',
  '108': '18',
  '115': '20',
  '127': '22',
  '137': '24',
}

/** The folder of the package that holds `file`: the nearest one with a package.json. */
function packageFolder(file: string): string {
  for (let folder = dirname(file); ; folder = dirname(folder)) {
    if (existsSync(join(folder, 'package.json'))) return folder
    if (dirname(folder) === folder) throw new Error(`no package.json above ${file}`)
  }
}

/**
 * Loads hyper-express, an optional peer dependency, and with it the native uWebSockets.js.
 * @throws MissingPeerDependencyError when hyper-express is not installed.
 * @throws TransportUnavailableError when it is, but cannot load on this platform: its
 *   uWebSockets.js build has no binary for this Node.js, or fell back to its JavaScript
 *   stand-in.
 */
export async function loadHyperExpress(): Promise<HyperExpressModule> {
  const unavailable = uwsUnavailable()
  if (unavailable?.kind === 'no-binary')
    throw new TransportUnavailableError('uws', unavailable.reason)
  let loaded: HyperExpressModule
  try {
    const module = (await importWithPeers(
      'The uws transport (hyper-express on uWebSockets.js)',
      UWS_PEERS,
      () => import('hyper-express'),
      ADVICE,
    )) as HyperExpressModule & { default?: HyperExpressModule }
    loaded = module.default ?? module
  } catch (error) {
    if (error instanceof MissingPeerDependencyError) throw error
    const reason = (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? ''
    throw new TransportUnavailableError('uws', reason, { cause: error })
  }
  // A binary that failed to load: uWebSockets.js went on with its stand-in, which lacks this.
  if (typeof (loaded.compressors as UndeclaredUws).LIBUS_LISTEN_EXCLUSIVE_PORT !== 'number') {
    throw new TransportUnavailableError(
      'uws',
      'its uWebSockets.js binary did not load, and its JavaScript stand-in cannot serve this transport',
    )
  }
  return loaded
}

/** What the uWebSockets.js build has that its types do not declare. */
interface UndeclaredUws {
  readonly LIBUS_LISTEN_EXCLUSIVE_PORT?: number
}

/** The same, of its app: `listen` with a host and options, and `close`. */
interface UndeclaredApp {
  listen(
    host: string,
    port: number,
    options: number,
    done: (socket: UwsListenSocket | false) => void,
  ): unknown
  close?: () => void
}

/**
 * Listens on `host:port` alone, as node:http does: uWebSockets.js shares a port with any other
 * socket that allows it unless asked for `LIBUS_LISTEN_EXCLUSIVE_PORT`, so that a second server
 * on a busy port would take a share of its connections instead of failing. hyper-express 6.18
 * asks for it only without a host, so the transport binds through uWS itself, after compiling
 * the server's routes as hyper-express's own `listen` does. Close the socket with
 * `server.close(socket)`.
 *
 * @throws Error as node:http's: `EADDRINUSE` when the port is taken, by any process.
 */
export async function listenExclusively(
  hyperExpress: HyperExpressModule,
  server: Server,
  host: string,
  port: number,
  tls: TlsFiles | undefined,
): Promise<UwsListenSocket> {
  // As hyper-express does before listening: uWS would fail without saying why.
  if (tls !== undefined) await Promise.all([access(tls.cert), access(tls.key)])
  const compile = (server as Server & { _compile?: () => void })._compile
  if (typeof compile !== 'function') {
    throw new TypeError('The uws transport needs hyper-express 6.18 (Server._compile is missing)')
  }
  compile.call(server)
  const app = server.uws_instance as unknown as UndeclaredApp
  const exclusive = (hyperExpress.compressors as UndeclaredUws).LIBUS_LISTEN_EXCLUSIVE_PORT
  if (typeof exclusive !== 'number' || typeof app.close !== 'function') {
    throw new TypeError('The uws transport needs a uWebSockets.js build with exclusive ports')
  }
  const socket = await new Promise<UwsListenSocket | false>((resolve) => {
    app.listen(host, port, exclusive, resolve)
  })
  if (socket === false) throw await listenFailure(host, port)
  return socket
}

/**
 * Closes every connection of the server's uWS app, the listen socket included: those left idle
 * by their clients, whom uWS would otherwise keep for its idle timeout (10 s).
 */
export function closeConnections(server: Server): void {
  ;(server.uws_instance as unknown as UndeclaredApp).close?.()
}

/**
 * Why uWS could not listen, which it does not say: node:http's own error for the same address
 * (`listen EADDRINUSE: address already in use 127.0.0.1:8080`, with its `code`, `syscall`,
 * `address` and `port`), found by trying it; a plain error when node:http could listen there.
 */
async function listenFailure(host: string, port: number): Promise<Error> {
  const probe = createServer()
  const error = await new Promise<Error | undefined>((resolve) => {
    probe.once('error', resolve)
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(undefined)))
  })
  return (
    error ??
    new Error(
      `uWebSockets.js could not listen on ${host}:${port} (an address node:http can listen on: is the TLS certificate and key pair valid?)`,
    )
  )
}
