import type { CliIo } from '../../server/cli/cli-io.js'
import { runCli } from '../../server/cli/run-cli.js'

/** What a run of the CLI in this process gave: its exit status and its two outputs. */
export interface CliRun {
  readonly status: number
  readonly out: string
  readonly err: string
}

/**
 * Runs the CLI in this process with a fake environment (`env`, nothing of this process's) and
 * no signal handling; resolves with status and output, each output's writes joined by lines.
 */
export async function cli(argv: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const out: string[] = []
  const err: string[] = []
  const io: CliIo = {
    env,
    out: (text) => void out.push(text),
    err: (text) => void err.push(text),
    signals: { once: () => undefined },
  }
  const status = await runCli(argv, io)
  return { status, out: out.join('\n'), err: err.join('\n') }
}
