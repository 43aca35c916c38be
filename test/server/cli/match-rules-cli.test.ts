import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { readServeConfig } from '../../../server/cli/serve-config.js'
import { Settings } from '../../../server/cli/settings.js'
import { cli } from '../../support/cli-in-process.js'

const directory = mkdtempSync(join(tmpdir(), 'match-rules-'))
after(() => rmSync(directory, { recursive: true, force: true }))

describe('serve --match-rules (D38)', () => {
  it('refuses a rules file with a mistake at start, in one line naming its line and field (status 2)', async () => {
    const file = join(directory, 'rules.json')
    writeFileSync(
      file,
      '{\n  "threshold": 0.7,\n  "rules": [\n    { "rule": "email", "weight": 0.5 },\n    { "rule": "nmae", "weight": 0.4 }\n  ]\n}\n',
    )
    const db = join(directory, 'never.sqlite')
    for (const [env, flags, setting] of [
      [{}, ['--match-rules', file], '--match-rules'],
      [{ MATCH_RULES_FILE: file }, [], 'MATCH_RULES_FILE'],
    ] as const) {
      const result = await cli(['serve', '--db', db, ...flags], env)
      assert.equal(result.status, 2, setting)
      assert.equal(result.err.split('\n').length, 1, result.err)
      assert.ok(result.err.includes(`invalid ${setting}:`), result.err)
      assert.ok(result.err.includes('line 5, rules.1.rule: must be one of'), result.err)
    }
    const unreadable = await cli(['serve', '--db', db, '--match-rules', join(directory, 'none')])
    assert.equal(unreadable.status, 2)
    assert.match(unreadable.err, /invalid --match-rules: cannot read/)
    assert.equal(existsSync(db), false, 'nothing was opened')
  })

  it('reads a valid rules file into the configuration, and none without the setting', () => {
    const file = join(directory, 'strict.json')
    writeFileSync(
      file,
      JSON.stringify({ threshold: 0.9, rules: [{ rule: 'fiscal_code', weight: 1 }] }),
    )
    const config = readServeConfig(new Settings({ 'match-rules': file }, {}))
    assert.deepEqual(config.matchRules, {
      threshold: 0.9,
      rules: [{ rule: 'fiscal_code', weight: 1 }],
    })
    assert.equal(readServeConfig(new Settings({}, {})).matchRules, undefined)
  })
})
