/**
 * A stand-in body for the writer thread in tests: the real one (`sqlite-writer-worker.ts`), which
 * ends the thread (exit code 70) as soon as it receives a create for `die@example.org`, after
 * the real body has taken the call but before its group commits.
 */
import { parentPort } from 'node:worker_threads'
import '../../../adapters/sqlite/threads/sqlite-writer-worker.js'
import type { ToWriter } from '../../../adapters/sqlite/threads/sqlite-writer-protocol.js'

parentPort!.on('message', (message: ToWriter) => {
  if (message.kind !== 'calls') return
  for (const [, method, args] of message.calls) {
    const record = args[0] as { email?: unknown } | undefined
    if (method === 'createBeneficiary' && record?.email === 'die@example.org') process.exit(70)
  }
})
