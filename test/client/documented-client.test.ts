import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { after, describe, it } from 'node:test'
import { startServer, type RunningServer } from '../../server/start-server.js'
import { createWorld } from '../server/server-fixtures.js'

const run = promisify(execFile)
const root = fileURLToPath(new URL('../../../', import.meta.url))

/** The first `js` block under the README's heading `heading`. */
async function readmeBlock(heading: string): Promise<string> {
  const readme = await readFile(join(root, 'README.md'), 'utf8')
  const section = readme.indexOf(`\n${heading}\n`)
  assert.ok(section >= 0, `README has no ${heading}`)
  const block = /```js\n([\s\S]*?)```/.exec(readme.slice(section))
  assert.ok(block !== null, `no js block under ${heading}`)
  return block[1]!
}

describe('the README section "HTTP client"', () => {
  let server: RunningServer | undefined
  // Inside the package, so that `beneficiary-service/client` resolves to this build.
  const script = join(root, 'dist', 'test', 'client', `readme-client-${process.pid}.mjs`)
  after(async () => {
    await server?.close(1_000)
    await rm(script, { force: true })
  })

  it('runs as shown against a real server and prints what the README says', async () => {
    const world = await createWorld()
    server = await startServer({ service: world.service, transport: 'node', port: 0 })
    await writeFile(script, await readmeBlock('## HTTP client'))
    const env: Record<string, string | undefined> = {
      ...process.env,
      BASE_URL: `${server.url}/v3`,
      CLIENT_ID: world.writer.client_id,
      CLIENT_SECRET: world.writer.client_secret,
    }
    delete env['NODE_TEST_CONTEXT']
    const { stdout } = await run(process.execPath, [script], { env, timeout: 30_000 })
    assert.equal(stdout, '412 precondition_failed\n1 pending Ada\n')
  })
})
