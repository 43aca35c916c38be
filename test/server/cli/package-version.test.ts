import assert from 'node:assert/strict'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { packageVersion } from '../../../server/cli/package-version.js'

const COMPILED = fileURLToPath(new URL('../../../server/cli/package-version.js', import.meta.url))

describe('packageVersion', () => {
  const root = mkdtempSync(join(tmpdir(), 'beneficiaries-version-'))
  after(() => rmSync(root, { recursive: true, force: true }))

  it("answers what this project's package.json says", () => {
    const manifest = JSON.parse(
      readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8'),
    ) as { version: string }
    assert.equal(packageVersion(), manifest.version)
  })

  it('reads the file of the package it is installed in when asked, past those of other names', async () => {
    // The compiled module alone, in a package of another version: nothing is compiled in.
    writeFileSync(
      join(root, 'package.json'),
      JSON.stringify({ name: 'beneficiary-service', version: '9.8.7-test', type: 'module' }),
    )
    mkdirSync(join(root, 'dist', 'server', 'cli'), { recursive: true })
    writeFileSync(join(root, 'dist', 'package.json'), JSON.stringify({ type: 'module' }))
    writeFileSync(
      join(root, 'dist', 'server', 'package.json'),
      JSON.stringify({ name: 'another-package', version: '1.0.0' }),
    )
    const copy = join(root, 'dist', 'server', 'cli', 'package-version.js')
    copyFileSync(COMPILED, copy)
    const module = (await import(pathToFileURL(copy).href)) as {
      packageVersion: typeof packageVersion
    }
    assert.equal(module.packageVersion(), '9.8.7-test')
    writeFileSync(
      join(root, 'package.json'),
      JSON.stringify({ name: 'beneficiary-service', version: '9.8.8-test', type: 'module' }),
    )
    assert.equal(module.packageVersion(), '9.8.8-test', 'read again, not remembered')
  })

  it('throws when no package.json of the package is above the file', () => {
    const lonely = mkdtempSync(join(tmpdir(), 'beneficiaries-lonely-'))
    try {
      assert.throws(
        () => packageVersion(pathToFileURL(join(lonely, 'cli.js')).href),
        /no package.json of beneficiary-service/,
      )
    } finally {
      rmSync(lonely, { recursive: true, force: true })
    }
  })
})
