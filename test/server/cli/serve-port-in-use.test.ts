import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { CliChild } from '../../support/cli-child.js'
import type { TransportName } from '../../../server/transports/transport.js'
import { skipOn } from '../../support/transports.js'

const directory = mkdtempSync(join(tmpdir(), 'beneficiaries-port-'))
const WAIT_MS = 20_000
let databases = 0

/** `beneficiaries serve` on a database of its own, with its output kept. */
function serve(transport: string, port: number): { child: CliChild; stdout: () => string } {
  let stdout = ''
  const child = new CliChild({
    args: ['serve', '--db', join(directory, `db-${++databases}.sqlite`), '--port', String(port)],
    env: { TRANSPORT: transport },
    onLine: (line) => (stdout += `${line}\n`),
  })
  return { child, stdout: () => stdout }
}

/** Starts a server on any free port and resolves with the port it listens on. */
async function firstServer(transport: string): Promise<{ child: CliChild; port: number }> {
  let seen: (port: number) => void = () => {}
  const listening = new Promise<number>((resolve) => (seen = resolve))
  const child = new CliChild({
    args: ['serve', '--db', join(directory, `db-${++databases}.sqlite`), '--port', '0'],
    env: { TRANSPORT: transport },
    onLine: (line) => {
      const match = /"Listening on http:\/\/127\.0\.0\.1:(\d+)\//.exec(line)
      if (match !== null) seen(Number(match[1]))
    },
  })
  const port = await Promise.race([
    listening,
    child.exited.then((exit) => {
      throw new Error(`the first server exited (${exit.code}): ${child.stderr}`)
    }),
  ])
  return { child, port }
}

describe('beneficiaries serve on a port already in use', () => {
  const children: CliChild[] = []
  after(async () => {
    await Promise.all(children.map((child) => child.kill()))
    rmSync(directory, { recursive: true, force: true })
  })

  const pairs: [TransportName, TransportName][] = [
    ['uws', 'uws'],
    ['uws', 'node'],
    ['node', 'uws'],
    ['node', 'node'],
  ]
  for (const [first, second] of pairs) {
    const title = `fails over ${second} with EADDRINUSE, one line and exit 1, next to a server over ${first}`
    it(title, { skip: skipOn(first) || skipOn(second) }, async () => {
      const running = await firstServer(first)
      children.push(running.child)
      const late = serve(second, running.port)
      children.push(late.child)
      const exit = await late.child.exitWithin(WAIT_MS)
      assert.ok(exit !== undefined, 'the second server kept running on a port in use')
      assert.equal(exit.code, 1)
      assert.doesNotMatch(late.stdout(), /Listening/)
      const lines = late.child.stderr.trim().split('\n')
      assert.equal(lines.length, 1, late.child.stderr)
      assert.equal(
        lines[0],
        `beneficiaries serve: cannot listen on 127.0.0.1:${running.port}: the address is already in use (EADDRINUSE): another server runs there; choose another --port`,
      )
      // The first server still answers, alone on its port.
      const health = await fetch(`http://127.0.0.1:${running.port}/healthz`)
      assert.equal(health.status, 200)
      assert.equal((await running.child.stop()).code, 0)
    })
  }
})
