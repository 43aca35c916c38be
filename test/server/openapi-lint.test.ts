import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { after, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { buildOpenApiDocument } from '../../server/openapi.js'

type Json = Record<string, unknown>

/** The project's root, where `redocly.yaml` lives (this file runs from `dist/test/server`). */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
const REDOCLY = join(
  dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')),
  'bin/cli.js',
)
const directory = mkdtempSync(join(tmpdir(), 'openapi-lint-'))
after(() => rmSync(directory, { recursive: true, force: true }))

interface LintReport {
  readonly status: number
  readonly totals: { errors: number; warnings: number }
  readonly problems: readonly { ruleId: string; message: string }[]
}

/** Lints `document` with Redocly CLI under the project's `redocly.yaml`. */
function lint(document: unknown, name: string): Promise<LintReport> {
  const file = join(directory, `${name}.json`)
  writeFileSync(file, JSON.stringify(document, null, 1))
  const config = join(ROOT, 'redocly.yaml')
  // A config the linter does not understand is an error, not a warning it prints and ignores.
  const args = [
    REDOCLY,
    'lint',
    '--lint-config',
    'error',
    '--config',
    config,
    '--format=json',
    file,
  ]
  // No usage report to Redocly and no update check, so the lint runs offline; a home of its
  // own, and none of the test run's variables (coverage among them).
  const env = {
    PATH: process.env['PATH'] ?? '',
    HOME: directory,
    REDOCLY_TELEMETRY: 'off',
    REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
  }
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { env, cwd: ROOT }, (error, stdout) => {
      try {
        const report = JSON.parse(stdout) as Omit<LintReport, 'status'>
        resolve({ ...report, status: error === null ? 0 : Number(error.code) })
      } catch {
        reject(error ?? new Error(`no report: ${stdout}`))
      }
    })
  })
}

describe('the OpenAPI document under a third-party linter (Redocly CLI)', () => {
  it('lints clean: no error and no warning under the recommended rules and the stricter ones of redocly.yaml', async () => {
    for (const basePath of ['/v3', '/api/v3']) {
      const report = await lint(buildOpenApiDocument({ basePath }), basePath.replaceAll('/', '-'))
      assert.deepEqual(
        report.problems.map((problem) => `${problem.ruleId}: ${problem.message}`),
        [],
      )
      assert.deepEqual(report.totals, { ...report.totals, errors: 0, warnings: 0 })
      assert.equal(report.status, 0)
    }
  })

  it('reports a document with an example that does not fit its schema, an undescribed tag and an operation without a 4xx', async () => {
    const document = buildOpenApiDocument() as Json & {
      paths: Record<string, Record<string, Json>>
      tags: Json[]
    }
    const create = document.paths['/v3/beneficiaries']!['post']!
    const media = ((create['requestBody'] as Json)['content'] as Record<string, Json>)[
      'application/json'
    ]!
    const examples = media['examples'] as Record<string, { value: Json }>
    Object.values(examples)[0]!.value['email'] = 'not an address'
    delete document.tags[0]!['description']
    const health = document.paths['/healthz']!['get']!
    health['responses'] = { '200': (health['responses'] as Json)['200'] }
    const report = await lint(document, 'broken')
    assert.deepEqual(report.problems.map((problem) => problem.ruleId).sort(), [
      'no-invalid-media-type-examples',
      'operation-4xx-response',
      'tag-description',
    ])
    assert.notEqual(report.status, 0)
  })
})
