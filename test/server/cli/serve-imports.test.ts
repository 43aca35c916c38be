import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { cli } from '../../support/cli-in-process.js'
import { CliChild } from '../../support/cli-child.js'

const directory = mkdtempSync(join(tmpdir(), 'serve-imports-'))
const children: CliChild[] = []
after(async () => {
  await Promise.all(children.map((child) => child.kill()))
  rmSync(directory, { recursive: true, force: true })
})

describe('beneficiaries serve runs import jobs (D39)', () => {
  it('takes a job posted to /v3/imports and runs it to its end', async () => {
    const db = join(directory, 'serve.sqlite')
    const created = await cli(['clients', 'create', '--name', 'roster', '--db', db])
    const client = JSON.parse(created.out) as { client_id: string; client_secret: string }
    let announce: (url: string) => void = () => {}
    const listening = new Promise<string>((resolve) => (announce = resolve))
    const child = new CliChild({
      args: ['serve', '--db', db, '--port', '0', '--transport', 'node'],
      env: {},
      onLine: (text) => {
        const line = JSON.parse(text) as Record<string, unknown>
        if (typeof line['url'] === 'string') announce(line['url'])
      },
    })
    children.push(child)
    const url = await listening
    const login = await fetch(`${url}/v3/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(client),
    })
    const { access_token: token } = (await login.json()) as { access_token: string }
    const csv = 'first_name;last_name;email\nAnna;Verdi;anna@example.org\nLuca;Neri;no-address\n'
    const started = await fetch(`${url}/v3/imports`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'text/csv; charset=utf-8' },
      body: csv,
    })
    assert.equal(started.status, 202)
    const location = started.headers.get('location')!
    let job: Record<string, unknown> = {}
    for (let i = 0; i < 100 && job['state'] !== 'done'; i++) {
      await delay(100)
      const answer = await fetch(`${url}${location}`, {
        headers: { authorization: `Bearer ${token}` },
      })
      job = (await answer.json()) as Record<string, unknown>
    }
    assert.equal(job['state'], 'done')
    assert.deepEqual([job['rows'], job['created'], job['refused']], [2, 1, 1])
    assert.equal((await child.stop()).code, 0)
  })
})
