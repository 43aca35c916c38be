import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { uwsUnavailable } from '../../../server/transports/uws-listen.js'
import { CliChild } from '../../support/cli-child.js'
import { TRANSPORTS_HERE, UWS_UNAVAILABLE } from '../../support/transports.js'

const directory = mkdtempSync(join(tmpdir(), 'beneficiaries-transports-'))

/** `beneficiaries serve` with `env`; resolves once it listens or exits, with its JSON lines. */
async function serve(name: string, env: Record<string, string> = {}) {
  const lines: Record<string, unknown>[] = []
  let listening: () => void = () => {}
  const listened = new Promise<void>((resolve) => (listening = resolve))
  const child = new CliChild({
    args: ['serve', '--db', join(directory, `${name}.sqlite`), '--port', '0'],
    env,
    onLine: (text) => {
      const line = JSON.parse(text) as Record<string, unknown>
      lines.push(line)
      if (typeof line['url'] === 'string') listening()
    },
  })
  const exit = await Promise.race([listened.then(() => undefined), child.exited])
  return { child, lines, exit }
}

describe('the transports on this Node.js line', () => {
  const children: CliChild[] = []
  after(async () => {
    await Promise.all(children.map((child) => child.kill()))
    rmSync(directory, { recursive: true, force: true })
  })

  it('are said in the log of the run, with why uws cannot run where it cannot', (t) => {
    // CI's log shows this line for each Node.js line the suite runs on (.ci/node-lines).
    t.diagnostic(
      `transports: ${TRANSPORTS_HERE.join(', ')} on Node.js ${process.versions.node}` +
        (UWS_UNAVAILABLE === undefined ? '' : ` (${UWS_UNAVAILABLE})`),
    )
    assert.ok(TRANSPORTS_HERE.includes('node'))
  })

  it('knows a uWebSockets.js build without a binary for a Node.js ABI, without loading it', () => {
    const abi127 = uwsUnavailable('127')
    assert.equal(abi127?.kind, 'no-binary')
    assert.match(abi127.reason, /has no binary for this Node\.js \(ABI 127\)/)
    assert.match(abi127.reason, /it has binaries for Node\.js 16, 18, 20 on /)
    assert.equal(uwsUnavailable('115'), undefined, 'Node 20 has its binary')
  })

  it('serve by default: uws where it runs, else node:http and one line saying why', async () => {
    const { child, lines, exit } = await serve('auto')
    children.push(child)
    assert.equal(exit, undefined, child.stderr)
    const listening = lines.find((line) => typeof line['url'] === 'string')!
    const fallbacks = lines.filter((line) =>
      /^The uws transport cannot run here/.test(String(line['msg'])),
    )
    if (UWS_UNAVAILABLE === undefined) {
      assert.equal(listening['transport'], 'uws')
      assert.equal(fallbacks.length, 0)
    } else {
      assert.equal(listening['transport'], 'node')
      assert.equal(fallbacks.length, 1)
      assert.equal(fallbacks[0]!['level'], 40)
      assert.ok(lines.indexOf(fallbacks[0]!) < lines.indexOf(listening))
    }
    // Nothing from uWebSockets.js's own loader: its stand-in is never loaded.
    assert.equal(child.stderr, '')
    assert.equal((await child.stop()).code, 0)
  })

  it(
    'serve --transport uws where it cannot run: one line naming the fix, exit 1',
    { skip: UWS_UNAVAILABLE === undefined && 'uws runs on this Node.js line' },
    async () => {
      const { child, exit } = await serve('uws', { TRANSPORT: 'uws' })
      children.push(child)
      assert.equal(exit?.code, 1)
      const lines = child.stderr.trimEnd().split('\n')
      assert.equal(lines.length, 1, child.stderr)
      assert.match(lines[0]!, /^beneficiaries serve: The uws transport .* has no binary for this/)
      assert.match(lines[0]!, /--transport node \(or TRANSPORT=node\)/)
    },
  )
})
