import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { UWS_UNAVAILABLE } from '../support/transports.js'

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
const PACKAGE = 'beneficiary-service'
const DRIVERS = ['better-sqlite3', 'kysely', 'pg', 'hyper-express', 'uWebSockets.js']

/** What `npm pack --json` says of the tarball. */
interface Packed {
  readonly filename: string
  readonly entryCount: number
  readonly size: number
  readonly files: readonly { readonly path: string }[]
}

/**
 * A host developer's environment: PATH and HOME (so the user's npm settings and cache) from the
 * test run, and none of the variables of `npm test` (`npm_*`) or of the coverage run.
 */
const HOST_ENV: Readonly<Record<string, string>> = {
  PATH: process.env['PATH'] ?? '',
  HOME: process.env['HOME'] ?? '',
  // The cache the outer npm uses, when it was given one.
  ...(process.env['npm_config_cache'] !== undefined && {
    npm_config_cache: process.env['npm_config_cache'],
  }),
}

/**
 * npm as a host project's developer runs it. Packages come from the npm cache when it has them
 * (`--prefer-offline`), else from the registry.
 */
async function npm(args: readonly string[], cwd: string): Promise<string> {
  const { stdout } = await run('npm', [...args], { cwd, env: HOST_ENV, timeout: 180_000 })
  return stdout
}

/** Runs a host program with Node and returns what it printed. */
async function node(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, args, { cwd, env: HOST_ENV, timeout: 60_000 })
  return stdout
}

/** Runs a program that must fail, and returns how. */
async function fails(
  cwd: string,
  file: string,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  return run(file, args, { cwd, env: HOST_ENV, timeout: 60_000 }).then(
    () => assert.fail(`${file} ${args.join(' ')} succeeded`),
    (error: { code: number; stdout: string; stderr: string }) => error,
  )
}

/** The README's embedding program, and the two lines that swap its storage for SQLite. */
function readmeProgram(): { memory: string; sqlite: string } {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const section = readme.slice(readme.indexOf('\n## Embedding in ten lines\n'))
  const blocks = [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!)
  const [memory, swap] = blocks
  assert.ok(memory !== undefined && swap !== undefined, 'the README has the program and the swap')
  const [swapImport, , swapStorage] = swap.trim().split('\n')
  const memoryImport = "import { MemoryStorage } from 'beneficiary-service/memory'"
  const memoryStorage = 'const storage = new MemoryStorage()'
  assert.ok(memory.includes(memoryImport) && memory.includes(memoryStorage))
  const sqlite = memory.replace(memoryImport, swapImport!).replace(memoryStorage, swapStorage!)
  return { memory, sqlite }
}

/** Every file under `folder`, recursively, as paths relative to it. */
function filesUnder(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' })
}

const timings: string[] = []
async function timed<T>(label: string, step: () => Promise<T>): Promise<T> {
  const started = performance.now()
  const result = await step()
  timings.push(`${label} ${((performance.now() - started) / 1000).toFixed(1)} s`)
  return result
}

describe('the packed package, installed into host applications', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'beneficiaries-package-'))
  const memoryHost = join(scratch, 'memory-host')
  const sqliteHost = join(scratch, 'sqlite-host')
  let packed: Packed
  let tarball: string
  let manifest: { peerDependencies: Record<string, string>; exports: Record<string, unknown> }

  before(async () => {
    const json = await timed('npm pack', () =>
      npm(['pack', '--ignore-scripts', '--json', '--pack-destination', scratch], ROOT),
    )
    packed = (JSON.parse(json) as Packed[])[0]!
    tarball = join(scratch, packed.filename)
    manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as typeof manifest
    mkdirSync(memoryHost)
    writeFileSync(
      join(memoryHost, 'package.json'),
      JSON.stringify({ name: 'memory-host', private: true, type: 'module' }),
    )
    // Plain `npm install <tarball>`: no override, scripts allowed (none may need to run).
    await timed('install into the memory host', () =>
      npm(['install', tarball, '--prefer-offline', '--no-audit', '--no-fund'], memoryHost),
    )
  })

  after(() => rmSync(scratch, { recursive: true, force: true }))

  it('the tarball holds the compiled library, its types and documents, licence and changelog: no tests, bench, examples or build info', () => {
    const paths = packed.files.map((file) => file.path)
    const allowed =
      /^(package\.json|README\.md|LICENSE|CHANGELOG\.md|core\/ports\/README\.md|core\/matching\/default-match-rules\.json|adapters\/[a-z]+\/README\.md|docs\/[a-z-]+\.md|dist\/(core|adapters|server|client)\/.+\.(js|d\.ts))$/
    assert.deepEqual(
      paths.filter((path) => !allowed.test(path)),
      [],
    )
    assert.ok(!paths.some((path) => /(^|\/)(test|bench|examples)\/|tsbuildinfo|\.map$/.test(path)))
    // Every entry point is there, with its types.
    for (const [subpath, target] of Object.entries(manifest.exports)) {
      const targets = typeof target === 'string' ? [target] : Object.values(target as object)
      for (const file of targets as string[]) {
        assert.ok(paths.includes(file.replace(/^\.\//, '')), `${subpath}: ${file}`)
      }
    }
    assert.ok(paths.includes('dist/server/cli.js'), 'the CLI')
    for (const document of ['README.md', 'LICENSE', 'CHANGELOG.md']) {
      assert.ok(paths.includes(document), document)
    }
  })

  it('installs with plain npm install: no driver, nothing native, nothing built', () => {
    const modules = join(memoryHost, 'node_modules')
    const installed = readdirSync(modules)
    assert.ok(installed.includes(PACKAGE))
    for (const driver of DRIVERS) assert.ok(!installed.includes(driver), driver)
    const native = filesUnder(modules).filter((path) => /(\.node|binding\.gyp)$/.test(path))
    assert.deepEqual(native, [])
  })

  it("runs the README's embedding program on memory storage, printing the same on every run", async () => {
    writeFileSync(join(memoryHost, 'example.mjs'), readmeProgram().memory)
    assert.equal(await node(memoryHost, 'example.mjs'), '1 1\n')
    assert.equal(await node(memoryHost, 'example.mjs'), '1 1\n')
  })

  it("runs the fake-clock example as the host's own test suite, through the package's names", async () => {
    // The compiled example as it is: it imports nothing but the package's entry points.
    const compiled = join(ROOT, 'dist/examples/testing-with-fake-clock.test.js')
    const copy = join(memoryHost, 'testing-with-fake-clock.test.mjs')
    writeFileSync(
      copy,
      readFileSync(compiled, 'utf8').replace(/\n\/\/# sourceMappingURL=.*\n?$/, '\n'),
    )
    assert.doesNotMatch(readFileSync(copy, 'utf8'), /from '\.\.?\//)
    const report = await node(memoryHost, '--test', '--test-reporter=tap', copy)
    assert.match(report, /^# pass 2$/m)
    assert.match(report, /^# fail 0$/m)
  })

  it('names the packages to install for a part whose drivers are missing, and serves over node:http', async () => {
    writeFileSync(
      join(memoryHost, 'missing.mjs'),
      `import { createBeneficiaryService, MissingPeerDependencyError } from 'beneficiary-service'
import { MemoryStorage } from 'beneficiary-service/memory'
import { startServer } from 'beneficiary-service/server'

const seen = {}
const report = (part, error) => {
  seen[part] = error instanceof MissingPeerDependencyError
    ? { message: error.message, packages: error.packages, missing: error.missing }
    : String(error)
}
for (const part of ['beneficiary-service/sqlite', 'beneficiary-service/postgres']) {
  await import(part).then(() => (seen[part] = 'loaded'), (error) => report(part, error))
}
const service = await createBeneficiaryService({ storage: new MemoryStorage() })
await startServer({ service, port: 0 }).then(() => (seen.uws = 'started'), (error) => report('uws', error))
const server = await startServer({ service, transport: 'node', port: 0 })
seen.node = (await fetch(server.url + '/healthz')).status
await server.close()
console.log(JSON.stringify(seen))
`,
    )
    const seen = JSON.parse(await node(memoryHost, 'missing.mjs')) as Record<
      string,
      { message: string; packages: { name: string; range: string }[]; missing: string[] }
    >
    const peers = manifest.peerDependencies
    const expected: Record<string, string[]> = {
      'beneficiary-service/sqlite': ['better-sqlite3', 'kysely'],
      'beneficiary-service/postgres': ['kysely', 'pg'],
      uws: ['hyper-express'],
    }
    for (const [part, names] of Object.entries(expected)) {
      const report = seen[part]!
      assert.equal(typeof report, 'object', `${part}: ${JSON.stringify(report)}`)
      assert.deepEqual(
        report.packages,
        names.map((name) => ({ name, range: peers[name] })),
      )
      assert.equal(report.missing.length, 1)
      assert.ok(names.includes(report.missing[0]!))
      const install = names.map((name) => `"${name}@${peers[name]}"`).join(' ')
      assert.ok(report.message.includes(`: npm install ${install}`), report.message)
    }
    assert.match(seen['uws']!.message, /"overrides": \{"uWebSockets\.js":"npm:@trufflesuite\//)
    assert.equal(seen['node'], 200)
    // The CLI says it in one line, exit 1.
    const cli = await fails(
      memoryHost,
      join(memoryHost, 'node_modules/.bin/beneficiaries'),
      'serve',
    )
    assert.equal(cli.code, 1)
    assert.match(
      cli.stderr,
      /^beneficiaries serve: beneficiary-service\/sqlite needs better-sqlite3 and kysely, .*: npm install "better-sqlite3@[^"]+" "kysely@[^"]+"\n$/,
    )
  })

  it('with better-sqlite3, kysely and hyper-express (and the override of the manual) installed: SQLite, uws, the CLI and the types', async (t) => {
    // Verbatim: node_modules/.bin links relatively, and must point into the new host.
    cpSync(memoryHost, sqliteHost, { recursive: true, verbatimSymlinks: true })
    const hostManifest = join(sqliteHost, 'package.json')
    // The override exactly as docs/embedding.md tells hosts to add it.
    const block = /```json\n"overrides": (\{[\s\S]*?\})\n```/.exec(
      readFileSync(join(ROOT, 'docs/embedding.md'), 'utf8'),
    )
    assert.ok(block !== null, 'docs/embedding.md shows the override')
    const overrides = JSON.parse(block[1]!) as Record<string, string>
    writeFileSync(
      hostManifest,
      JSON.stringify({ ...JSON.parse(readFileSync(hostManifest, 'utf8')), overrides }),
    )
    // better-sqlite3 has no prebuilt binary reachable from here, and compiling it takes minutes:
    // the version this project built is installed without its install script, and given the
    // binary this project built of it, as prebuild-install would put a downloaded one in place.
    const built = join(ROOT, 'node_modules/better-sqlite3')
    const version = (name: string): string =>
      (
        JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as {
          version: string
        }
      ).version
    await timed('install the drivers', () =>
      npm(
        [
          'install',
          `better-sqlite3@${version('better-sqlite3')}`,
          `kysely@${version('kysely')}`,
          `hyper-express@${manifest.peerDependencies['hyper-express']}`,
          '--ignore-scripts',
          '--prefer-offline',
          '--no-audit',
          '--no-fund',
        ],
        sqliteHost,
      ),
    )
    const release = join(sqliteHost, 'node_modules/better-sqlite3/build/Release')
    mkdirSync(release, { recursive: true })
    cpSync(join(built, 'build/Release/better_sqlite3.node'), join(release, 'better_sqlite3.node'))

    // The README's program on SQLite: the file keeps what each run adds.
    writeFileSync(join(sqliteHost, 'example.mjs'), readmeProgram().sqlite)
    assert.equal(await node(sqliteHost, 'example.mjs'), '1 1\n')
    assert.equal(await node(sqliteHost, 'example.mjs'), '2 2\n')

    writeFileSync(
      join(sqliteHost, 'uws.mjs'),
      `import { createBeneficiaryService } from 'beneficiary-service'
import { MemoryStorage } from 'beneficiary-service/memory'
import { startServer } from 'beneficiary-service/server'

const service = await createBeneficiaryService({ storage: new MemoryStorage() })
const server = await startServer({ service, port: 0 })
console.log(server.transport, (await fetch(server.url + '/healthz')).status)
await server.close()
`,
    )
    if (UWS_UNAVAILABLE === undefined) {
      assert.equal(await node(sqliteHost, 'uws.mjs'), 'uws 200\n')
    } else {
      // Where the build has no binary for this Node.js, uws refuses to start, naming the fix.
      const refused = await fails(sqliteHost, process.execPath, 'uws.mjs')
      assert.match(
        refused.stderr,
        /TransportUnavailableError: The uws transport .* transport: 'node'/,
      )
    }
    const bin = join(sqliteHost, 'node_modules/.bin/beneficiaries')
    await run(bin, ['migrate', '--db', join(sqliteHost, 'cli.sqlite')], {
      cwd: sqliteHost,
      env: HOST_ENV,
    })

    // Every entry point resolves with its types: a misspelt option fails to compile in each.
    writeFileSync(
      join(sqliteHost, 'check.ts'),
      `import { createBeneficiaryService, type BeneficiaryService } from 'beneficiary-service'
import { MemoryStorage } from 'beneficiary-service/memory'
import { openSqliteStorage, SqliteStorage } from 'beneficiary-service/sqlite'
import { openPostgresStorage, type PostgresStorage } from 'beneficiary-service/postgres'
import { startServer, type RunningServer } from 'beneficiary-service/server'

export async function check(): Promise<void> {
  const service: BeneficiaryService = await createBeneficiaryService({ storage: new MemoryStorage() })
  const sqlite: SqliteStorage = await openSqliteStorage({ path: ':memory:' })
  const isStorage: boolean = sqlite instanceof SqliteStorage
  const postgres: Promise<PostgresStorage> = openPostgresStorage({ connectionString: 'postgres://' })
  const server: RunningServer = await startServer({ service, transport: 'node', port: 0 })
  void [isStorage, postgres, server]
  // @ts-expect-error
  await createBeneficiaryService({ storag: new MemoryStorage() })
  // @ts-expect-error
  new MemoryStorage(1)
  // @ts-expect-error
  await openSqliteStorage({ pth: ':memory:' })
  // @ts-expect-error
  await openPostgresStorage({ connectionStrin: 'postgres://' })
  // @ts-expect-error
  await startServer({ service, transprt: 'node' })
}
`,
    )
    writeFileSync(
      join(sqliteHost, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2023',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules/@types')],
        },
        files: ['check.ts'],
      }),
    )
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc')
    await timed('type-check', () => node(sqliteHost, tsc, '-p', 'tsconfig.json'))
    t.diagnostic(`${packed.entryCount} files packed (${packed.size} bytes); ${timings.join(', ')}`)
  })
})
