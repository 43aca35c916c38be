import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { closeSync, openSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { createLogger, TurnBufferedDestination } from '../../server/logger.js'

const LOGGER_MODULE = fileURLToPath(new URL('../../server/logger.js', import.meta.url))

async function withLogFile(run: (path: string, fd: number) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'beneficiary-logger-'))
  const path = join(dir, 'out.log')
  const fd = openSync(path, 'w')
  try {
    await run(path, fd)
  } finally {
    closeSync(fd)
    await rm(dir, { recursive: true, force: true })
  }
}

function lines(path: string): { msg?: string; n?: number; level: number }[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { msg?: string; n?: number; level: number })
}

describe('TurnBufferedDestination', () => {
  it('holds the lines of a turn and writes them, in order, once the turn ends', async () => {
    await withLogFile(async (path, fd) => {
      const logger = createLogger({ destination: new TurnBufferedDestination(fd) })
      for (let n = 0; n < 500; n++) logger.info({ n }, 'request')
      assert.equal(readFileSync(path, 'utf8'), '', 'nothing is written within the turn')
      await nextTurn()
      assert.deepEqual(
        lines(path).map((line) => line.n),
        Array.from({ length: 500 }, (_, n) => n),
      )
    })
  })

  it('writes everything received on flush, even within the turn, and non-ASCII text whole', async () => {
    await withLogFile(async (path, fd) => {
      const logger = createLogger({ destination: new TurnBufferedDestination(fd) })
      logger.info('first')
      logger.warn('Zoë 𝒜 — ünïcödé')
      await new Promise<void>((resolve, reject) =>
        logger.flush((error) => (error ? reject(error) : resolve())),
      )
      assert.deepEqual(
        lines(path).map((line) => [line.level, line.msg]),
        [
          [30, 'first'],
          [40, 'Zoë 𝒜 — ünïcödé'],
        ],
      )
    })
  })

  it('writes the lines still held when the process exits', () => {
    // A child logs and exits in the same turn: without the exit hook the lines would be lost.
    const script = `
      const { createLogger } = await import(${JSON.stringify(LOGGER_MODULE)})
      const logger = createLogger()
      for (let n = 0; n < 3; n++) logger.info({ n }, 'before exit')
      process.exit(0)
    `
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
    })
    assert.deepEqual(
      out
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { n: number }).n),
      [0, 1, 2],
    )
  })
})
