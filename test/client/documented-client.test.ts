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

/** The first `js` block under the heading `heading` of the document at `path`. */
async function documentBlock(path: string, heading: string): Promise<string> {
  const text = `\n${await readFile(join(root, path), 'utf8')}`
  const section = text.indexOf(`\n${heading}\n`)
  assert.ok(section >= 0, `${path} has no ${heading}`)
  const block = /```js\n([\s\S]*?)```/.exec(text.slice(section))
  assert.ok(block !== null, `no js block under ${heading}`)
  return block[1]!
}

describe('the example of docs/http-client.md', () => {
  let server: RunningServer | undefined
  // Inside the package, so that `beneficiary-service/client` resolves to this build.
  const script = join(root, 'dist', 'test', 'client', `readme-client-${process.pid}.mjs`)
  after(async () => {
    await server?.close(1_000)
    await rm(script, { force: true })
  })

  it('runs as shown against a real server and prints what the page says', async () => {
    const world = await createWorld()
    server = await startServer({ service: world.service, transport: 'node', port: 0 })
    await writeFile(script, await documentBlock('docs/http-client.md', '# The HTTP client'))
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
