import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { chromium, type Browser, type Page } from 'playwright-core'
import { startServer, type RunningServer } from '../../server/start-server.js'
import { TRANSPORTS_HERE } from '../support/transports.js'
import { createWorld, MARIO, type World } from './server-fixtures.js'
import { CHROMIUM, chromiumMissing, FLAGS, STEP_MS } from '../support/chromium.js'

const missing = chromiumMissing('the reference page test')

type Json = Record<string, unknown>

describe('the API reference page in a real browser (chromium)', { skip: missing }, () => {
  let world: World
  let server: RunningServer
  let browser: Browser
  let page: Page
  const problems: string[] = []
  const elsewhere: string[] = []
  const requests: { url: string; authorization: string | undefined }[] = []

  before(async () => {
    world = await createWorld()
    const credentials = {
      client_id: world.writer.client_id,
      client_secret: world.writer.client_secret,
    }
    const session = await world.service.login({ ip: '127.0.0.1' }, credentials)
    await world.service.create({ token: session.value.access_token }, MARIO)
    // The transport `beneficiaries serve` runs by default here: uws where it can run.
    server = await startServer({
      service: world.service,
      transport: TRANSPORTS_HERE[0],
      host: '127.0.0.1',
      port: 0,
      docs: true,
    })
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS })
    const context = await browser.newContext()
    // Nothing may leave this server: anything else is recorded and refused.
    const origin = new URL(server.url).origin
    await context.route('**/*', (route) => {
      const url = route.request().url()
      if (new URL(url).origin === origin) return route.continue()
      elsewhere.push(url)
      return route.abort()
    })
    page = await context.newPage()
    page.setDefaultTimeout(STEP_MS)
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`)
    })
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
    page.on('requestfailed', (request) => problems.push(`failed: ${request.url()}`))
    page.on('request', (request) => {
      requests.push({ url: request.url(), authorization: request.headers()['authorization'] })
    })
  })

  after(async () => {
    await browser?.close()
    await server?.close()
  })

  it('loads with no console error and no request leaving the server, and lists every operation of the document', async () => {
    const answer = await page.goto(`${server.url}/docs`)
    assert.equal(answer?.status(), 200)
    await page.locator('.opblock').first().waitFor()
    const document = (await (await fetch(`${server.url}/v3/openapi.json`)).json()) as {
      paths: Record<string, Record<string, Json>>
    }
    const expected = Object.values(document.paths).flatMap((item) =>
      Object.entries(item)
        .filter(([method]) => method !== 'parameters')
        .map(([, operation]) => {
          const tag = (operation['tags'] as string[])[0]!
          return `operations-${tag}-${String(operation['operationId'])}`
        }),
    )
    assert.ok(expected.length >= 19, `${expected.length} operations`)
    const shown = await page.locator('.opblock').evaluateAll((blocks) => blocks.map((b) => b.id))
    assert.deepEqual([...shown].sort(), [...expected].sort())
    assert.deepEqual(problems, [])
    assert.deepEqual(elsewhere, [])
    for (const { url } of requests) assert.ok(url.startsWith(`${server.url}/`), url)
  })

  it('"try it": logs in with a client\'s credentials, then lists beneficiaries with the token, all through the page', async () => {
    const login = page.locator('#operations-auth-login')
    await login.locator('.opblock-summary-control').click()
    await login.getByRole('button', { name: 'Try it out' }).click()
    await login.locator('textarea.body-param__text').fill(
      JSON.stringify({
        client_id: world.writer.client_id,
        client_secret: world.writer.client_secret,
      }),
    )
    await login.getByRole('button', { name: 'Execute' }).click()
    const loginStatus = login
      .locator('.live-responses-table .response .response-col_status')
      .first()
    await loginStatus.waitFor()
    assert.equal((await loginStatus.innerText()).trim(), '200')
    const shownBody = login
      .locator('.live-responses-table .response-col_description .microlight')
      .first()
    const token = (JSON.parse(await shownBody.innerText()) as { access_token: string }).access_token
    assert.match(token, /^ey/)

    await page.locator('.auth-wrapper .authorize').click()
    const dialog = page.locator('.modal-ux')
    await dialog.locator('#auth-bearer-value').fill(token)
    await dialog.getByRole('button', { name: 'Apply credentials' }).click()
    await dialog.getByRole('button', { name: 'Close' }).click()

    const list = page.locator('#operations-beneficiaries-list')
    await list.locator('.opblock-summary-control').click()
    await list.getByRole('button', { name: 'Try it out' }).click()
    await list.getByRole('button', { name: 'Execute' }).click()
    const listStatus = list.locator('.live-responses-table .response .response-col_status').first()
    await listStatus.waitFor()
    assert.equal((await listStatus.innerText()).trim(), '200')
    const page1 = JSON.parse(
      await list
        .locator('.live-responses-table .response-col_description .microlight')
        .first()
        .innerText(),
    ) as { data: { last_name: string }[]; meta: { total_count: number } }
    assert.equal(page1.meta.total_count, 1)
    assert.equal(page1.data[0]?.last_name, MARIO.last_name)

    const sent = requests.filter((request) => new URL(request.url).pathname === '/v3/beneficiaries')
    assert.equal(sent.length, 1)
    assert.equal(sent[0]!.authorization, `Bearer ${token}`)
    assert.deepEqual(problems, [])
    assert.deepEqual(elsewhere, [])
  })
})
