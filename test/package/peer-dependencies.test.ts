import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import type { PeerPackage } from '../../core/index.js'
import { POSTGRES_PEERS } from '../../adapters/postgres/postgres-driver.js'
import { REDIS_PEERS } from '../../adapters/redis/redis-driver.js'
import { SQLITE_PEERS } from '../../adapters/sqlite/sqlite-config.js'
import { DOCS_PEERS } from '../../server/docs-page.js'
import { TRACING_PEERS } from '../../server/tracing/otel-sdk.js'
import { UWS_OVERRIDE, UWS_PEERS } from '../../server/transports/uws-listen.js'

interface Manifest {
  readonly dependencies: Record<string, string>
  readonly devDependencies: Record<string, string>
  readonly peerDependencies: Record<string, string>
  readonly peerDependenciesMeta: Record<string, { optional?: boolean }>
  readonly overrides: Record<string, string>
}

const root = new URL('../../../', import.meta.url)
const manifest = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as Manifest
/** Where a host is told what to install: the embedding page of the manual. */
const guide = readFileSync(new URL('docs/embedding.md', root), 'utf8')

/** Every part of the code that loads a package the host installs, with what it names. */
const PARTS: Readonly<Record<string, readonly PeerPackage[]>> = {
  'beneficiary-service/sqlite': SQLITE_PEERS,
  'beneficiary-service/postgres': POSTGRES_PEERS,
  'beneficiary-service/redis': REDIS_PEERS,
  'the uws transport': UWS_PEERS,
  'the API reference page': DOCS_PEERS,
  tracing: TRACING_PEERS,
}

describe('the drivers a host installs', () => {
  it('are optional peer dependencies with the ranges the code names, and devDependencies of the clone', () => {
    for (const [part, peers] of Object.entries(PARTS)) {
      for (const { name, range } of peers) {
        assert.equal(manifest.peerDependencies[name], range, `${part}: ${name}`)
        assert.equal(manifest.peerDependenciesMeta[name]?.optional, true, `${name} is optional`)
        assert.ok(manifest.devDependencies[name] !== undefined, `${name} is installed in a clone`)
        assert.equal(manifest.dependencies[name], undefined, `${name} is not a dependency`)
      }
    }
  })

  it('are every peer dependency there is (a new one is named by the code that loads it, in PARTS)', () => {
    const named = new Set(Object.values(PARTS).flatMap((peers) => peers.map((peer) => peer.name)))
    assert.deepEqual(Object.keys(manifest.peerDependencies).sort(), [...named].sort())
    assert.equal(manifest.dependencies['uWebSockets.js'], undefined)
  })

  it('are installed by the commands docs/embedding.md gives, and uws with the override it gives', () => {
    for (const peers of [SQLITE_PEERS, POSTGRES_PEERS, REDIS_PEERS, TRACING_PEERS]) {
      const command = `npm install ${peers.map((peer) => `"${peer.name}@${peer.range}"`).join(' ')}`
      assert.ok(guide.includes(command), `docs/embedding.md shows ${command}`)
    }
    const hyperExpress = UWS_PEERS[0]!
    assert.ok(guide.includes(`npm install ${hyperExpress.name}@${hyperExpress.range}`))
    assert.deepEqual(manifest.overrides, UWS_OVERRIDE)
    const [name, spec] = Object.entries(UWS_OVERRIDE)[0]!
    assert.ok(guide.includes(`"overrides": {\n  "${name}": "${spec}"\n}`), 'the override')
  })
})
