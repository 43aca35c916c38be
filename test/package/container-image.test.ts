import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { CliChild } from '../support/cli-child.js'

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL('../../../', import.meta.url))

/** One instruction of a Dockerfile: its keyword, upper-cased, and the rest of its line. */
interface Instruction {
  readonly keyword: string
  readonly args: string
}

/** The Dockerfile's stages, each a list of instructions, continuation lines joined. */
function stages(text: string): Instruction[][] {
  const logical = text
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((line) => line.trim() !== '')
  const all: Instruction[][] = []
  for (const line of logical) {
    const [, keyword, args] = /^\s*(\S+)\s*(.*)$/.exec(line)!
    const instruction = { keyword: keyword!.toUpperCase(), args: args!.trim() }
    if (instruction.keyword === 'FROM') all.push([])
    all.at(-1)?.push(instruction)
  }
  return all
}

/** The exec form of an instruction (`["node", "…"]`), which must be JSON. */
function execForm(args: string): string[] {
  const json = args.slice(args.indexOf('['))
  const form = JSON.parse(json) as unknown
  assert.ok(Array.isArray(form) && form.every((part) => typeof part === 'string'), args)
  return form as string[]
}

/** `ENV A=1 B=2` as an object. */
function envOf(stage: Instruction[]): Record<string, string> {
  const env: Record<string, string> = {}
  for (const { keyword, args } of stage) {
    if (keyword !== 'ENV') continue
    for (const pair of args.split(/\s+/)) {
      const at = pair.indexOf('=')
      env[pair.slice(0, at)] = pair.slice(at + 1)
    }
  }
  return env
}

async function freePort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as AddressInfo
  await new Promise((resolve) => probe.close(resolve))
  return port
}

/** npm as the image's build runs it, packages from npm's cache when it has them. */
async function npm(args: readonly string[], cwd: string): Promise<string> {
  const env = { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '' }
  const { stdout } = await run('npm', [...args, '--no-audit', '--no-fund', '--prefer-offline'], {
    cwd,
    env,
    timeout: 180_000,
  })
  return stdout
}

const dockerfile = stages(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))
const final = dockerfile.at(-1)!

describe('the container image (Dockerfile), checked without a container engine', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'beneficiaries-image-'))
  const children: CliChild[] = []
  after(async () => {
    await Promise.all(children.map((child) => child.kill()))
    rmSync(scratch, { recursive: true, force: true })
  })

  it('is multi-stage, and its last stage runs the server as PID 1, not root, with /data a volume and a health check', () => {
    assert.ok(dockerfile.length >= 3, 'build, install and final stages')
    const keywords = final.map((instruction) => instruction.keyword)
    const user = final.findLast((instruction) => instruction.keyword === 'USER')
    assert.ok(user !== undefined && !/^(root|0)(:|$)/.test(user.args), 'USER is not root')
    assert.ok(keywords.indexOf('USER') < keywords.indexOf('ENTRYPOINT'))
    assert.deepEqual(execForm(final.find((i) => i.keyword === 'VOLUME')!.args), ['/data'])
    assert.match(envOf(final)['DATABASE_PATH']!, /^\/data\//)
    const healthcheck = final.find((i) => i.keyword === 'HEALTHCHECK')!
    assert.match(healthcheck.args, /\/healthz/)
    // Exec form, no npm or shell between the runtime and the server: SIGTERM reaches it.
    const command = [
      ...execForm(final.find((i) => i.keyword === 'ENTRYPOINT')!.args),
      ...execForm(final.find((i) => i.keyword === 'CMD')!.args),
    ]
    assert.deepEqual(command.slice(0, 2), ['node', 'dist/server/cli.js'])
    assert.ok(!command.includes('npm') && !command.includes('sh'))
    // The final stage installs nothing: it copies what the install stage made with --omit=dev.
    assert.ok(!final.some((i) => i.keyword === 'RUN' && /\bnpm\b/.test(i.args)))
    const installs = dockerfile.flat().filter((i) => i.keyword === 'RUN' && /npm ci\b/.test(i.args))
    assert.ok(installs.some((i) => /npm ci --omit=dev/.test(i.args)))
  })

  it('holds production dependencies only, and its command serves, answers its health check and stops on SIGTERM', async () => {
    // What the build stage does: pack the package, unpack it, and make it the application.
    const packed = JSON.parse(
      await npm(['pack', '--ignore-scripts', '--json', '--pack-destination', scratch], ROOT),
    ) as { filename: string }[]
    const app = join(scratch, 'app')
    mkdirSync(app)
    await run('tar', [
      '-xzf',
      join(scratch, packed[0]!.filename),
      '-C',
      app,
      '--strip-components=1',
    ])
    cpSync(join(ROOT, 'package-lock.json'), join(app, 'package-lock.json'))
    const manifestStep = dockerfile
      .flat()
      .find((i) => i.keyword === 'RUN' && i.args.includes('production-manifest.mjs'))!
    const drivers = /production-manifest\.mjs ([^&]+)/
      .exec(manifestStep.args)![1]!
      .trim()
      .split(/\s+/)
    await run(process.execPath, [join(ROOT, 'container/production-manifest.mjs'), ...drivers], {
      cwd: app,
    })
    await npm(['install', '--package-lock-only', '--omit=dev', '--ignore-scripts'], app)
    // What the install stage does. better-sqlite3 cannot build here (no network for its
    // prebuilt binary, minutes to compile): it gets the binary this checkout built, as
    // prebuild-install would put a downloaded one in place.
    await npm(['ci', '--omit=dev', '--ignore-scripts'], app)
    const release = join(app, 'node_modules/better-sqlite3/build/Release')
    mkdirSync(release, { recursive: true })
    cpSync(
      join(ROOT, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node'),
      join(release, 'better_sqlite3.node'),
    )

    const project = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>
      dependencies: Record<string, string>
    }
    for (const name of [...Object.keys(project.dependencies), ...drivers]) {
      assert.ok(existsSync(join(app, 'node_modules', name, 'package.json')), `${name} installed`)
    }
    for (const name of Object.keys(project.devDependencies)) {
      if (drivers.includes(name)) continue
      assert.ok(!existsSync(join(app, 'node_modules', name)), `${name} is for development only`)
    }
    assert.ok(!existsSync(join(app, 'node_modules/uWebSockets.js')))

    // The final stage's command, in its environment; the volume a folder of the scratch's,
    // and the address loopback rather than every interface.
    const port = String(await freePort())
    const env = {
      ...envOf(final),
      HOST: '127.0.0.1',
      PORT: port,
      DATABASE_PATH: join(scratch, 'data/beneficiaries.sqlite'),
    }
    const [runtime, ...args] = [
      ...execForm(final.find((i) => i.keyword === 'ENTRYPOINT')!.args),
      ...execForm(final.find((i) => i.keyword === 'CMD')!.args),
    ]
    assert.equal(runtime, 'node')
    const workdir = final.findLast((i) => i.keyword === 'WORKDIR')!.args
    assert.equal(workdir, '/app')
    const lines: Record<string, unknown>[] = []
    let listening: () => void = () => {}
    const listened = new Promise<void>((resolve) => (listening = resolve))
    const server = new CliChild({
      command: [process.execPath],
      args,
      cwd: app,
      env,
      onLine: (text) => {
        const line = JSON.parse(text) as Record<string, unknown>
        lines.push(line)
        if (typeof line['url'] === 'string') listening()
      },
    })
    children.push(server)
    const early = await Promise.race([listened.then(() => undefined), server.exited])
    assert.equal(early, undefined, server.stderr)
    assert.equal(lines.find((line) => line['url'] !== undefined)!['transport'], 'node')

    const healthcheck = execForm(final.find((i) => i.keyword === 'HEALTHCHECK')!.args)
    assert.equal(healthcheck[0], 'node')
    await run(process.execPath, healthcheck.slice(1), { cwd: app, env, timeout: 10_000 })

    const exit = await server.stop('SIGTERM')
    assert.equal(exit.code, 0, server.stderr)
    assert.equal(lines.at(-1)!['msg'], 'Stopped')
    // The health check fails once the server is gone, as the runtime would see it.
    await assert.rejects(run(process.execPath, healthcheck.slice(1), { env, timeout: 10_000 }))
  })

  it('compose.yaml gives the instances only settings the server reads, and mounts a configuration that exists', async () => {
    const compose = readFileSync(join(ROOT, 'compose.yaml'), 'utf8')
    const anchor = /^x-instance: &instance\n((?: {2}.*\n|\n)+)/m.exec(compose)
    assert.ok(anchor !== null, 'the instances share one definition')
    const environment = /^ {2}environment:\n((?: {4}.*\n)+)/m.exec(anchor[1]!)![1]!
    const names = [...environment.matchAll(/^ {4}([A-Z_]+):/gm)].map((match) => match[1]!)
    assert.ok(names.includes('DATABASE_URL') && names.includes('REDIS_URL'), names.join())
    const help = (
      await run(process.execPath, [join(ROOT, 'dist/server/cli.js'), 'serve', '--help'])
    ).stdout
    for (const name of names) assert.match(help, new RegExp(`\\b${name}\\b`), name)
    assert.match(anchor[1]!, /^ {2}build: \.$/m, 'built from this Dockerfile')
    for (const [, file] of compose.matchAll(/^ {6}- \.\/([^:]+):/gm)) {
      assert.ok(existsSync(join(ROOT, file!)), file)
    }
    assert.match(compose, /examples\/scale-out\/haproxy\.cfg:/)
  })
})
