#!/usr/bin/env node
/**
 * Checks the subject of every commit after a base commit: at most 72 characters, starting with
 * a lower-case scope and a colon (`docs: …`, `sqlite: …`, `server/cli: …`). Merge commits are
 * skipped. The history up to the base is exempt: it was written before the rule.
 *
 *   node scripts/check-commits.mjs [BASE]      (npm run lint runs it with the default base)
 *
 * Where the base is not in the clone (a shallow clone, a copy without .git), it says so and
 * passes: there is nothing it could check against.
 */
import { execFileSync } from 'node:child_process'

/** The last commit of the history before the rule. */
const DEFAULT_BASE = 'cf577683b6f602cdfc3d0b8007412a2e86ca252a'
const MAX_LENGTH = 72
const SCOPED = /^[a-z0-9][a-z0-9._/-]*: \S/

const base = process.argv[2] ?? DEFAULT_BASE

/** Runs git and returns its output, or `undefined` when it fails. */
function git(...args) {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
  } catch {
    return undefined
  }
}

if (git('cat-file', '-e', `${base}^{commit}`) === undefined) {
  console.log(
    `check-commits: ${base.slice(0, 12)} is not in this clone (shallow, or no git history): commit subjects not checked`,
  )
  process.exit(0)
}

const log = git('log', '--no-merges', '--format=%h%x09%s', `${base}..HEAD`) ?? ''
const problems = []
let checked = 0
for (const line of log.split('\n')) {
  if (line === '') continue
  checked++
  const [hash, subject] = [line.slice(0, line.indexOf('\t')), line.slice(line.indexOf('\t') + 1)]
  const length = [...subject].length
  if (length > MAX_LENGTH) {
    problems.push(`${hash} is ${length} characters long, over ${MAX_LENGTH}: ${subject}`)
  }
  if (!SCOPED.test(subject)) {
    problems.push(`${hash} does not start with a scope ("docs: …", "sqlite: …"): ${subject}`)
  }
}

if (problems.length > 0) {
  console.error(`check-commits: ${problems.length} problem(s) in the commit subjects:`)
  for (const problem of problems) console.error(`  ${problem}`)
  console.error('Reword them with git rebase -i; the why goes in the body, not the subject.')
  process.exit(1)
}
console.log(`check-commits: ${checked} commit subject(s) since ${base.slice(0, 12)} are fine`)
