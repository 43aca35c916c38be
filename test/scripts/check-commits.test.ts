import assert from 'node:assert/strict'
import { execFile, execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'

const SCRIPT = fileURLToPath(new URL('../../../scripts/check-commits.mjs', import.meta.url))

/** git with a fixed identity and none of the user's or the machine's settings. */
const GIT_ENV: Readonly<Record<string, string>> = {
  PATH: process.env['PATH'] ?? '',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.org',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.org',
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8' }).trim()
}

/** Commits nothing but a subject, and returns the commit's hash. */
function commit(cwd: string, subject: string): string {
  git(cwd, 'commit', '--allow-empty', '--quiet', '-m', subject)
  return git(cwd, 'rev-parse', 'HEAD')
}

/** Runs the check in `cwd` against `base`: its exit status and what it said. */
function check(cwd: string, base: string): Promise<{ status: number; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [SCRIPT, base], { cwd, env: GIT_ENV }, (error, stdout, stderr) => {
      resolve({ status: error === null ? 0 : Number(error.code), output: stdout + stderr })
    })
  })
}

describe('the commit-message check (npm run lint)', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'check-commits-'))
  const repo = join(scratch, 'repo')
  let base = ''

  before(() => {
    git(scratch, 'init', '--quiet', '-b', 'main', repo)
    commit(repo, 'an old subject without a scope, far longer than seventy-two characters, exempt')
    base = commit(repo, 'the last commit before the rule')
  })
  after(() => rmSync(scratch, { recursive: true, force: true }))

  it('passes subjects of at most 72 characters that start with a scope, and skips merges', async () => {
    commit(repo, 'docs: move the operations into docs/operations.md')
    commit(repo, `server/cli: ${'x'.repeat(72 - 'server/cli: '.length)}`)
    git(repo, 'checkout', '--quiet', '-b', 'side')
    commit(repo, 'test: walk every relative link of the manual')
    git(repo, 'checkout', '--quiet', 'main')
    git(repo, 'merge', '--no-ff', '--quiet', '-m', "Merge branch 'side'", 'side')
    const { status, output } = await check(repo, base)
    assert.equal(status, 0, output)
    assert.match(output, /3 commit subject\(s\)/)
  })

  it('fails on a subject over 72 characters, or one without a scope, naming each', async () => {
    const long = commit(repo, `docs: ${'y'.repeat(67)}`)
    const unscoped = commit(repo, 'Fix the thing')
    const { status, output } = await check(repo, base)
    assert.equal(status, 1)
    assert.match(output, new RegExp(`${long.slice(0, 7)}\\w* is 73 characters long`))
    assert.match(output, new RegExp(`${unscoped.slice(0, 7)}\\w* does not start with a scope`))
    assert.doesNotMatch(output, /exempt/)
  })

  it('passes with a note where the base is not in the clone (a shallow clone)', async () => {
    const shallow = join(scratch, 'shallow')
    git(scratch, 'clone', '--quiet', '--depth', '1', `file://${repo}`, shallow)
    const { status, output } = await check(shallow, base)
    assert.equal(status, 0, output)
    assert.match(output, /not in this clone/)
  })
})
