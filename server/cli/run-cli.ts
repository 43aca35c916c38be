import { MissingPeerDependencyError } from '../../core/missing-peer-dependency-error.js'
import { TransportUnavailableError } from '../transports/transport-unavailable-error.js'
import { CommandFailedError, UsageError } from './cli-error.js'
import type { CliIo } from './cli-io.js'
import { auditCommand } from './audit-command.js'
import { clientsCommand } from './clients-command.js'
import { didYouMean, nearest } from './did-you-mean.js'
import { keysCommand } from './keys-command.js'
import { MAIN_HELP } from './help.js'
import { backupCommand, migrateCommand, seedCommand } from './maintenance-commands.js'
import { packageVersion } from './package-version.js'
import { serveCommand } from './serve-command.js'
import { webhooksCommand } from './webhooks-command.js'
import { importCommand } from './import-command.js'
import { exportCommand } from './export-command.js'

type Command = (args: readonly string[], io: CliIo) => Promise<number>

const COMMANDS: Readonly<Record<string, Command>> = {
  serve: serveCommand,
  clients: clientsCommand,
  keys: keysCommand,
  migrate: migrateCommand,
  backup: backupCommand,
  seed: seedCommand,
  audit: auditCommand,
  webhooks: webhooksCommand,
  import: importCommand,
  export: exportCommand,
}

/** The long options the tool takes before any command (`-h` and `-v` are their short forms). */
const LONG_OPTIONS = ['help', 'version']

/**
 * Runs the command-line tool on `argv` (without the node and script paths) and resolves with
 * its exit status: 0 done, 1 failed, 2 usage or configuration error. `--version` (or `-v`)
 * prints the version of the installed package. Errors are reported on `io.err` as one line,
 * with the nearest command or option when a name was mistyped; nothing is thrown.
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
  if (name === '--version' || name === '-v') {
    io.out(packageVersion())
    return 0
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined
  if (command === undefined) {
    io.err(`beneficiaries: ${unknownCommand(name)} Run "beneficiaries --help".`)
    return 2
  }
  try {
    return await command(args, io)
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(
        `beneficiaries ${name}: ${sentence(error.message)} Run "beneficiaries ${name} --help".`,
      )
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

/** "unknown command "sed". Did you mean "seed"?", or the same for an option before any command. */
function unknownCommand(name: string): string {
  if (name.startsWith('-')) {
    const near = name.startsWith('--') ? nearest(name.slice(2), LONG_OPTIONS) : []
    const hint = didYouMean(near.map((option) => `--${option}`))
    return `unknown option ${name}. ${hint === '' ? 'The options of a command go after it.' : hint}`
  }
  const hint = didYouMean(nearest(name, [...Object.keys(COMMANDS), 'help']).map((c) => `"${c}"`))
  return sentence(`unknown command ${JSON.stringify(name)}${hint === '' ? '' : `. ${hint}`}`)
}

/** `text` ending as a sentence does: with a full stop unless it has one, or a question mark. */
function sentence(text: string): string {
  return /[.?!]$/.test(text) ? text : `${text}.`
}
