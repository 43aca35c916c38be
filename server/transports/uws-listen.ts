import { access } from 'node:fs/promises'
import { createServer } from 'node:net'
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

/**
 * Loads hyper-express, an optional peer dependency, and with it the native uWebSockets.js.
 * @throws MissingPeerDependencyError when hyper-express is not installed.
 * @throws TransportUnavailableError when it is, but cannot load on this platform.
 */
export async function loadHyperExpress(): Promise<HyperExpressModule> {
  try {
    const loaded = (await importWithPeers(
      'The uws transport (hyper-express on uWebSockets.js)',
      UWS_PEERS,
      () => import('hyper-express'),
      ADVICE,
    )) as HyperExpressModule & { default?: HyperExpressModule }
    return loaded.default ?? loaded
  } catch (error) {
    if (error instanceof MissingPeerDependencyError) throw error
    const reason = (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? ''
    throw new TransportUnavailableError('uws', reason, { cause: error })
  }
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
