import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { DOCS_CSP } from '../../server/docs-page.js'
import { createHandler } from '../../server/handler.js'
import { createWorld, send } from './server-fixtures.js'

describe('the API reference page (handler)', () => {
  it('is not served unless asked for: /docs and its files are unknown paths', async () => {
    const handler = createHandler((await createWorld()).service)
    for (const path of ['/docs', '/docs/swagger-ui-bundle.js']) {
      const answer = await send(handler, 'GET', path)
      assert.equal(answer.status, 404, path)
      assert.equal(answer.json?.['error'], 'not_found')
    }
  })

  it('serves a page with no inline script under a strict policy, naming the document of the base path', async () => {
    const handler = createHandler((await createWorld()).service, {
      docs: true,
      basePath: '/api/v3',
    })
    const page = await send(handler, 'GET', '/docs')
    assert.equal(page.status, 200)
    assert.equal(page.headers['content-type'], 'text/html; charset=utf-8')
    assert.equal(page.headers['content-security-policy'], DOCS_CSP)
    assert.equal(page.headers['x-content-type-options'], 'nosniff')
    assert.equal(page.headers['x-frame-options'], 'DENY')
    assert.equal(page.headers['referrer-policy'], 'no-referrer')
    assert.ok(page.headers['x-request-id'])
    // Plugins, workers and the rest fall back to default-src 'none'.
    for (const directive of [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      "connect-src 'self'",
      "frame-ancestors 'none'",
    ]) {
      assert.ok(DOCS_CSP.split('; ').includes(directive), directive)
    }
    assert.doesNotMatch(DOCS_CSP, /unsafe|\*|https?:/)
    const html = String(page.body)
    assert.match(html, /data-openapi="\/api\/v3\/openapi\.json"/)
    const scripts = [...html.matchAll(/<script([^>]*)>([^<]*)<\/script>/g)]
    assert.equal(scripts.length, 2)
    for (const [, attributes, inline] of scripts) {
      assert.match(String(attributes), / src="\/docs\//)
      assert.equal(inline, '')
    }
    assert.doesNotMatch(html, /https?:\/\//, 'nothing from elsewhere')
  })

  it('serves each file the page names with its content type, for good, and no other', async () => {
    const handler = createHandler((await createWorld()).service, { docs: true })
    const html = String((await send(handler, 'GET', '/docs')).body)
    const urls = [...html.matchAll(/(?:src|href)="(\/docs\/[^"?]+)\?v=([\w-]+)"/g)]
    assert.deepEqual(urls.map(([, path]) => path).sort(), [
      '/docs/reference.js',
      '/docs/swagger-ui-bundle.js',
      '/docs/swagger-ui.css',
    ])
    for (const [, path] of urls) {
      const file = await send(handler, 'GET', path!)
      assert.equal(file.status, 200, path)
      assert.equal(
        file.headers['content-type'],
        path!.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8',
      )
      assert.equal(file.headers['cache-control'], 'public, max-age=31536000, immutable')
      assert.equal(file.headers['x-content-type-options'], 'nosniff')
      assert.ok(String(file.body).length > 300, path)
    }
    const bundle = await send(handler, 'GET', '/docs/swagger-ui-bundle.js')
    assert.match(String(bundle.body), /SwaggerUIBundle/)
    for (const path of [
      '/docs/index.html',
      '/docs/swagger-ui-bundle.js.map',
      '/docs/..%2Fpackage.json',
    ]) {
      assert.equal((await send(handler, 'GET', path)).status, 404, path)
    }
    const post = await send(handler, 'POST', '/docs')
    assert.equal(post.status, 405)
    assert.equal(post.headers['allow'], 'GET, HEAD')
  })
})
