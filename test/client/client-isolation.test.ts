import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { after, before, describe, it } from 'node:test'
import * as client from '../../client/index.js'
import { startServer, type RunningServer } from '../../server/start-server.js'
import { createWorld, type World } from '../server/server-fixtures.js'

const run = promisify(execFile)
const root = fileURLToPath(new URL('../../../', import.meta.url))
const compiled = join(root, 'dist', 'client')

/** Runs `script` with Node in `cwd`, outside any test runner, and returns what it printed. */
async function node(cwd: string, script: string, env: Record<string, string> = {}) {
  const childEnv: Record<string, string | undefined> = { ...process.env, ...env }
  delete childEnv['NODE_TEST_CONTEXT']
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
    cwd,
    env: childEnv,
    timeout: 30_000,
  })
  return stdout
}

describe('a host that imports only the client (beneficiary-service/client)', () => {
  let world: World
  let server: RunningServer
  let folder: string

  before(async () => {
    world = await createWorld()
    server = await startServer({ service: world.service, transport: 'node', port: 0 })
    folder = await mkdtemp(join(tmpdir(), 'client-only-'))
  })
  after(async () => {
    await server.close(1_000)
    await rm(folder, { recursive: true, force: true })
  })

  it('runs from the client folder alone: no core, server, adapter, driver or node_modules', async () => {
    // Copied away from the package, any import of another folder or package would fail.
    await cp(compiled, join(folder, 'client'), {
      recursive: true,
      filter: (source) => !source.endsWith('.map') && !source.endsWith('.d.ts'),
    })
    await writeFile(join(folder, 'package.json'), '{ "type": "module" }\n')
    const out = await node(
      folder,
      `import { BeneficiaryClient } from './client/index.js'
       const client = new BeneficiaryClient({
         baseUrl: process.env.BASE_URL,
         credentials: { clientId: process.env.CLIENT_ID, clientSecret: process.env.CLIENT_SECRET },
       })
       const { value } = await client.create({ first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.org' })
       const page = await client.list({ per_page: 1 })
       console.log(JSON.stringify({ id: value.id, total: page.value.meta.total_count }))`,
      {
        BASE_URL: `${server.url}/v3`,
        CLIENT_ID: world.writer.client_id,
        CLIENT_SECRET: world.writer.client_secret,
      },
    )
    assert.deepEqual(JSON.parse(out), { id: 1, total: 1 })
  })

  it('its compiled files import nothing but each other', async () => {
    const files = (await readdir(compiled)).filter((name) => name.endsWith('.js'))
    assert.ok(files.includes('index.js') && files.length >= 5, files.join(', '))
    for (const name of files) {
      // Without comments: the TSDoc examples import the package by name.
      const source = (await readFile(join(compiled, name), 'utf8'))
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '')
      const specifiers = [...source.matchAll(/\b(?:from|import)\s*['"]([^'"]+)['"]/g)]
      if (name === 'index.js') assert.ok(specifiers.length >= 4, 'the index re-exports its files')
      for (const [, specifier] of specifiers) {
        assert.match(specifier ?? '', /^\.\/[a-z-]+\.js$/, `${name} imports ${specifier}`)
      }
      assert.doesNotMatch(source, /\bimport\(|\brequire\(/, `${name} loads a module dynamically`)
    }
  })

  it('type-checks with the web platform only: no Node types, no Node globals', async () => {
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc')
    const { stdout } = await run(
      process.execPath,
      [tsc, '-p', join(root, 'client', 'tsconfig.json')],
      {
        cwd: root,
        timeout: 120_000,
      },
    ).catch((error: { stdout?: string }) => assert.fail(error.stdout ?? String(error)))
    assert.equal(stdout, '')
  })

  it('is what the package exports as beneficiary-service/client', async () => {
    const manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as {
      exports: Record<string, { types: string; default: string }>
    }
    assert.deepEqual(manifest.exports['./client'], {
      types: './dist/client/index.d.ts',
      default: './dist/client/index.js',
    })
    const exported = (await import('beneficiary-service/client')) as typeof client
    assert.equal(exported.BeneficiaryClient, client.BeneficiaryClient)
  })
})
