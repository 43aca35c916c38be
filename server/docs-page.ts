import type { PeerPackage } from '../core/missing-peer-dependency-error.js'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { ApiResponse } from './api-response.js'

/** One file of the reference page, ready to be answered. */
export interface DocsFile {
  /** `Content-Type`. */
  readonly type: string
  /** `Cache-Control`. */
  readonly cache: string
  readonly body: string
}

/** The package the page is drawn by; the host installs it to serve the page. */
export const DOCS_PACKAGE = 'swagger-ui-dist'

/** The package the reference page serves, which the host installs (an optional peer dependency). */
export const DOCS_PEERS: readonly PeerPackage[] = Object.freeze([
  { name: DOCS_PACKAGE, range: '^5.35.0' },
])

/**
 * What the page may load, and nothing more: its scripts, stylesheet and the document from this
 * server, its images from the stylesheet's `data:` URLs, requests ("try it") to this server
 * only; no inline script, no plugin, no frame around it, no form sent anywhere.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

/** Headers of every file of the page beyond the server's usual ones. */
export const DOCS_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy': DOCS_CSP,
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
})

// Starts Swagger UI on the document named by the page. A file of its own: the policy allows
// no inline script. The validator badge would load an image from validator.swagger.io.
const START_SCRIPT = `'use strict'
var root = document.getElementById('reference')
window.ui = SwaggerUIBundle({
  url: root.getAttribute('data-openapi'),
  domNode: root,
  validatorUrl: null,
  deepLinking: true,
  displayRequestDuration: true,
  showExtensions: true,
  filter: true,
  tryItOutEnabled: false,
  supportedSubmitMethods: ['get', 'put', 'post', 'delete', 'head'],
})
`

const IMMUTABLE = 'public, max-age=31536000, immutable'

/**
 * The API reference page at `/docs`: Swagger UI, drawn in the browser from the OpenAPI
 * document this server serves, its "try it" requests sent to this server. Its script and
 * stylesheet come from the `swagger-ui-dist` package, read once here and held in memory; the
 * page loads nothing from anywhere else, so it works offline. File URLs carry a hash of their
 * content, so a browser may keep them for good.
 */
export class DocsPage {
  readonly #files: ReadonlyMap<string, DocsFile>
  readonly #page: DocsFile

  /**
   * Reads the package's files.
   * @throws Error naming the package to install when `swagger-ui-dist` is not installed.
   */
  constructor(documentPath: string) {
    const dist = docsPackageFolder()
    const read = (name: string) => readFileSync(join(dist, name), 'utf8')
    const files = new Map<string, DocsFile>([
      [
        'swagger-ui.css',
        { type: 'text/css; charset=utf-8', cache: IMMUTABLE, body: read('swagger-ui.css') },
      ],
      [
        'swagger-ui-bundle.js',
        {
          type: 'text/javascript; charset=utf-8',
          cache: IMMUTABLE,
          body: read('swagger-ui-bundle.js'),
        },
      ],
      [
        'reference.js',
        { type: 'text/javascript; charset=utf-8', cache: IMMUTABLE, body: START_SCRIPT },
      ],
    ])
    const url = (name: string) => `/docs/${name}?v=${hashOf(files.get(name)!.body)}`
    this.#files = files
    this.#page = {
      type: 'text/html; charset=utf-8',
      cache: 'no-store',
      body: `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Beneficiary service API reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${url('swagger-ui.css')}">
</head>
<body>
<div id="reference" data-openapi="${escapeAttribute(documentPath)}"></div>
<script src="${url('swagger-ui-bundle.js')}"></script>
<script src="${url('reference.js')}"></script>
</body>
</html>
`,
    }
  }

  /** The page itself (`name` undefined) or one of its files; `undefined` for an unknown name. */
  file(name: string | undefined): DocsFile | undefined {
    return name === undefined ? this.#page : this.#files.get(name)
  }

  /**
   * The answer with the page (`name` undefined) or one of its files, `base`'s status and
   * headers with the file's own and the page's policy; `undefined` for an unknown name.
   */
  answer(name: string | undefined, base: ApiResponse): ApiResponse | undefined {
    const file = this.file(name)
    if (file === undefined) return undefined
    const headers = { ...base.headers, ...DOCS_HEADERS }
    headers['content-type'] = file.type
    headers['cache-control'] = file.cache
    return { status: base.status, headers, body: file.body }
  }
}

/**
 * The folder of the installed `swagger-ui-dist` package.
 * @throws Error naming the package to install when it is not installed.
 */
export function docsPackageFolder(): string {
  try {
    return dirname(createRequire(import.meta.url).resolve(`${DOCS_PACKAGE}/package.json`))
  } catch (error) {
    throw new Error(
      `The API reference page needs the ${DOCS_PACKAGE} package: install it (npm install "${DOCS_PACKAGE}@${DOCS_PEERS[0]!.range}"), or turn the page off (--docs off, or docs: false)`,
      { cause: error },
    )
  }
}

function hashOf(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 12)
}

function escapeAttribute(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;')
}
