import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser } from 'playwright-core'
import { startServer, type RunningServer } from '../../server/start-server.js'
import { CHROMIUM, chromiumMissing, FLAGS, STEP_MS } from '../support/chromium.js'
import { TRANSPORTS_HERE } from '../support/transports.js'
import { createWorld, MARIO, type World } from './server-fixtures.js'

const missing = chromiumMissing('the cross-origin browser test')

/** The compiled typed client, served to the page as the browser's own modules. */
const CLIENT = fileURLToPath(new URL('../../client/', import.meta.url))

/**
 * The page on the other origin: it lists beneficiaries through the typed client and reports
 * what it got, or how it failed.
 */
const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>A cross-origin page</title>
<script type="module">
import { BeneficiaryClient } from '/client/index.js'
window.listBeneficiaries = async (baseUrl, clientId, clientSecret) => {
  const client = new BeneficiaryClient({ baseUrl, credentials: { clientId, clientSecret } })
  try {
    const answer = await client.list({ per_page: 10 })
    return {
      ok: true,
      names: answer.value.data.map((beneficiary) => beneficiary.last_name),
      requestId: answer.requestId ?? null,
      rateLimited: answer.rateLimit !== undefined,
    }
  } catch (error) {
    return { ok: false, name: error.name, message: String(error.message) }
  }
}
window.ready = true
</script>`

/** Serves the page and the client's modules on 127.0.0.1: an origin of its own. */
async function pageServer(): Promise<Server> {
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://page').pathname
    if (path === '/') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE)
      return
    }
    const file = /^\/client\/([a-z-]+\.js)$/.exec(path)?.[1]
    if (file !== undefined && existsSync(CLIENT + file)) {
      response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' })
      response.end(readFileSync(CLIENT + file))
      return
    }
    response.writeHead(404).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return server
}

interface Listing {
  readonly ok: boolean
  readonly names?: string[]
  readonly requestId?: string | null
  readonly rateLimited?: boolean
  readonly name?: string
  readonly message?: string
}

describe(
  'a page on another origin calling the API in a real browser (chromium)',
  { skip: missing },
  () => {
    let world: World
    let page: Server
    let pageOrigin: string
    let browser: Browser
    const servers: RunningServer[] = []

    before(async () => {
      world = await createWorld()
      const session = await world.service.login(
        { ip: '127.0.0.1' },
        { client_id: world.writer.client_id, client_secret: world.writer.client_secret },
      )
      await world.service.create({ token: session.value.access_token }, MARIO)
      page = await pageServer()
      pageOrigin = `http://127.0.0.1:${(page.address() as AddressInfo).port}`
      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS })
    })

    after(async () => {
      await browser?.close()
      for (const server of servers) await server.close()
      await new Promise((resolve) => page?.close(resolve))
    })

    /** Opens the page in a fresh context and lists beneficiaries from the API at `api`. */
    async function listFrom(api: RunningServer): Promise<{ listing: Listing; console: string[] }> {
      const context = await browser.newContext()
      const tab = await context.newPage()
      tab.setDefaultTimeout(STEP_MS)
      const console: string[] = []
      tab.on('console', (message) => console.push(message.text()))
      try {
        await tab.goto(pageOrigin)
        await tab.waitForFunction(() => (globalThis as { ready?: boolean }).ready === true)
        assert.notEqual(new URL(api.url).origin, pageOrigin, 'two ports are two origins')
        const listing = await tab.evaluate(
          ([baseUrl, id, secret]) =>
            (
              globalThis as unknown as {
                listBeneficiaries: (a: string, b: string, c: string) => Promise<Listing>
              }
            ).listBeneficiaries(baseUrl!, id!, secret!),
          [`${api.url}/v3`, world.writer.client_id, world.writer.client_secret],
        )
        return { listing, console }
      } finally {
        await context.close()
      }
    }

    for (const transport of TRANSPORTS_HERE) {
      it(`lists beneficiaries through the typed client when the page's origin is allowed (${transport})`, async () => {
        const api = await startServer({
          service: world.service,
          transport,
          port: 0,
          corsOrigins: [pageOrigin],
        })
        servers.push(api)
        const { listing } = await listFrom(api)
        assert.equal(listing.ok, true, JSON.stringify(listing))
        assert.deepEqual(listing.names, ['Rossi'])
        // Headers the browser shows a script only when exposed: the request id, the limits.
        assert.equal(typeof listing.requestId, 'string')
        assert.equal(listing.rateLimited, true)
      })

      it(`is refused by the browser when the page's origin is not allowed (${transport})`, async () => {
        const api = await startServer({
          service: world.service,
          transport,
          port: 0,
          corsOrigins: ['https://app.example.org'],
        })
        servers.push(api)
        const { listing, console } = await listFrom(api)
        assert.equal(listing.ok, false, JSON.stringify(listing))
        assert.equal(listing.name, 'TypeError')
        assert.match(listing.message!, /Failed to fetch/)
        assert.ok(
          console.some((line) => /blocked by CORS policy/.test(line)),
          console.join('\n'),
        )
      })
    }
  },
)
