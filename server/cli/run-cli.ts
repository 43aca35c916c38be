import { MissingPeerDependencyError } from '../../core/missing-peer-dependency-error.js'
import { TransportUnavailableError } from '../transports/transport-unavailable-error.js'
import { CommandFailedError, UsageError } from './cli-error.js'
import type { CliIo } from './cli-io.js'
import { clientsCommand } from './clients-command.js'
import { MAIN_HELP } from './help.js'
import { backupCommand, migrateCommand, seedCommand } from './maintenance-commands.js'
import { serveCommand } from './serve-command.js'

type Command = (args: readonly string[], io: CliIo) => Promise<number>

const COMMANDS: Readonly<Record<string, Command>> = {
  serve: serveCommand,
  clients: clientsCommand,
  migrate: migrateCommand,
  backup: backupCommand,
  seed: seedCommand,
}

/**
 * Runs the command-line tool on `argv` (without the node and script paths) and resolves with
 * its exit status: 0 done, 1 failed, 2 usage or configuration error. Errors are reported on
 * `io.err` as one line; nothing is thrown.
 *
 * @example
 * const status = await runCli(['clients', 'list', '--db', 'data.sqlite'], io)
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const [name, ...args] = argv
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out(MAIN_HELP)
    return name === undefined ? 2 : 0
  }
  const command = COMMANDS[name]
  if (command === undefined) {
    io.err(`beneficiaries: unknown command ${JSON.stringify(name)}. Run "beneficiaries --help".`)
    return 2
  }
  try {
    return await command(args, io)
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`beneficiaries ${name}: ${error.message}. Run "beneficiaries ${name} --help".`)
      return 2
    }
    if (
      error instanceof CommandFailedError ||
      error instanceof TransportUnavailableError ||
      error instanceof MissingPeerDependencyError
    ) {
      io.err(`beneficiaries ${name}: ${error.message}`)
      return 1
    }
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error)
    io.err(`beneficiaries ${name}: failed: ${message}`)
    return 1
  }
}
