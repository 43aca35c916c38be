import assert from 'node:assert/strict'
import { spawn, type ChildProcessByStdio } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import type { Readable, Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, it } from 'node:test'
import { openSqliteStorage } from '../../../adapters/sqlite/index.js'
import { createdEntry, listQuery, newBeneficiary } from '../../contracts/storage-fixtures.js'

const ACKS_BEFORE_KILL = 300

function script(name: string): string {
  return fileURLToPath(new URL(`./${name}.js`, import.meta.url))
}

type Child = ChildProcessByStdio<Writable, Readable, null>

/** Starts a child script and gives its stdout line by line. */
function start(
  name: string,
  args: readonly string[],
): { child: Child; lines: AsyncIterator<string> } {
  const child = spawn(process.execPath, [script(name), ...args], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  return { child, lines }
}

async function nextLine(lines: AsyncIterator<string>): Promise<string | undefined> {
  const line = await lines.next()
  return line.done === true ? undefined : line.value
}

describe('SQLite across processes', () => {
  let directory = ''
  let path = ''

  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'sqlite-processes-'))
    path = join(directory, 'shared.db')
  })

  afterEach(async () => {
    await rm(directory, { recursive: true, force: true })
  })

  for (const writer of ['inline', 'thread'] as const) {
    it(`loses no acknowledged write when the writing process is killed with SIGKILL (writer ${writer})`, async () => {
      await killedWhileWriting(writer)
    })
  }

  async function killedWhileWriting(writer: 'inline' | 'thread'): Promise<void> {
    const { child, lines } = start('durability-writer', [path, writer])
    const exited = once(child, 'close')
    const acknowledged: number[] = []
    for (;;) {
      const line = await nextLine(lines)
      if (line === undefined) break
      acknowledged.push(Number(line))
      if (acknowledged.length === ACKS_BEFORE_KILL) child.kill('SIGKILL')
    }
    const [, signal] = await exited
    assert.equal(signal, 'SIGKILL')
    assert.ok(acknowledged.length >= ACKS_BEFORE_KILL)

    const storage = await openSqliteStorage({ path })
    try {
      assert.equal(storage.database.pragma('integrity_check', { simple: true }), 'ok')
      for (const id of acknowledged) {
        assert.equal((await storage.beneficiaries.get(id))?.email, `writer${id - 1}@example.org`)
      }
      const { total } = await storage.beneficiaries.list(listQuery())
      // At most one group of eight may have committed without being acknowledged yet.
      assert.ok(total >= acknowledged.length && total <= acknowledged.length + 8)
      const found = await storage.beneficiaries.list(listQuery({ search: ['nguyen'] }))
      assert.equal(found.total, Math.floor(total / 2))
    } finally {
      await storage.close()
    }
  }

  it('makes a second process’s write wait for the first one’s transaction instead of failing', async () => {
    const storage = await openSqliteStorage({ path })
    const { child, lines } = start('contended-writer', [path, '20000'])
    const exited = once(child, 'close')
    try {
      assert.equal(await nextLine(lines), 'open')
      storage.database.exec('BEGIN IMMEDIATE')
      const mine = await storage.beneficiaries.create(
        newBeneficiary(),
        createdEntry(newBeneficiary()),
      )
      child.stdin.write('go\n')
      assert.equal(await nextLine(lines), 'SQLITE_BUSY')
      storage.database.exec('COMMIT')
      assert.equal(mine.kind, 'created')
      const theirs = await nextLine(lines)
      assert.equal(theirs, `created ${mine.kind === 'created' ? mine.record.id + 1 : NaN}`)
      const [code] = await exited
      assert.equal(code, 0)
      assert.equal((await storage.beneficiaries.list(listQuery())).total, 2)
    } finally {
      if (storage.database.inTransaction) storage.database.exec('ROLLBACK')
      child.kill()
      await storage.close()
    }
  })

  it('shows what the busy timeout prevents: with none, the second write fails while the first holds the lock', async () => {
    const storage = await openSqliteStorage({ path })
    const { child, lines } = start('contended-writer', [path, '0'])
    const exited = once(child, 'close')
    try {
      assert.equal(await nextLine(lines), 'open')
      storage.database.exec('BEGIN IMMEDIATE')
      child.stdin.write('go\n')
      assert.equal(await nextLine(lines), 'SQLITE_BUSY')
      assert.equal(await nextLine(lines), 'failed service_unavailable')
      storage.database.exec('COMMIT')
      await exited
      assert.equal((await storage.beneficiaries.list(listQuery())).total, 0)
    } finally {
      if (storage.database.inTransaction) storage.database.exec('ROLLBACK')
      child.kill()
      await storage.close()
    }
  })
})
