import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { CliChild } from '../../support/cli-child.js'

const directory = mkdtempSync(join(tmpdir(), 'beneficiaries-docs-'))
const children: CliChild[] = []
after(async () => {
  await Promise.all(children.map((child) => child.kill()))
  rmSync(directory, { recursive: true, force: true })
})

/** `beneficiaries serve` on a port of its own; resolves with the child and its log lines. */
async function serve(args: string[], env: Record<string, string> = {}) {
  const lines: Record<string, unknown>[] = []
  let announce: (url: string) => void = () => {}
  const listening = new Promise<string>((resolve) => (announce = resolve))
  const child = new CliChild({
    args: ['serve', '--db', join(directory, `${children.length}.sqlite`), '--port', '0', ...args],
    env,
    onLine: (text) => {
      const line = JSON.parse(text) as Record<string, unknown>
      lines.push(line)
      if (typeof line['url'] === 'string') announce(line['url'])
    },
  })
  children.push(child)
  return { child, lines, url: await listening }
}

describe('beneficiaries serve and the API reference page', () => {
  it('serves the page by default and says where, its largest file whole over the default transport', async () => {
    const { child, lines, url } = await serve([])
    const page = await fetch(`${url}/docs`)
    assert.equal(page.status, 200)
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8')
    const bundle = /src="(\/docs\/swagger-ui-bundle\.js[^"]*)"/.exec(await page.text())![1]!
    const script = await (await fetch(url + bundle)).text()
    const file = createRequire(import.meta.url).resolve('swagger-ui-dist/swagger-ui-bundle.js')
    assert.ok(script === readFileSync(file, 'utf8'), `${script.length} characters`)
    assert.equal((await child.stop()).code, 0)
    assert.ok(lines.some((line) => line['docs'] === `${url}/docs`))
  })

  it('--docs off: no page, and the OpenAPI document still', async () => {
    const { child, lines, url } = await serve(['--docs', 'off'], { TRANSPORT: 'node' })
    assert.equal((await fetch(`${url}/docs`)).status, 404)
    assert.equal((await fetch(`${url}/docs/swagger-ui-bundle.js`)).status, 404)
    assert.equal((await fetch(`${url}/v3/openapi.json`)).status, 200)
    assert.equal((await child.stop()).code, 0)
    assert.equal(lines.filter((line) => line['docs'] !== undefined).length, 0)
  })
})
