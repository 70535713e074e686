// The transferfs command with every command registered, not yet parsing anything: main.ts
// runs it, the manual page (manual.ts) describes it, so both see the same commands.
import { Command } from 'commander'
import { applyFolderFlags } from '../config/paths.js'
import { VERSION } from '../version.js'
import { commands } from './commands.js'
import { usageExits } from './output/errors.js'

export function buildProgram(): Command {
  const program = new Command()
    .name('transferfs')
    .description('Mount a Transfer Service account as a folder, and use the service from the command line.')
    .version(VERSION)
    .showHelpAfterError()

  // Set before the commands are added: commander copies it into each of them, so a usage
  // error anywhere exits with EXIT.usage (2) and --help / --version with 0.
  usageExits(program)
  // --config-dir / --cache-dir / --data-dir become their TRANSFERFS_*_DIR variables before any action.
  program.hook('preAction', (_program, command) => applyFolderFlags(command.optsWithGlobals()))
  for (const register of commands) register(program)
  return program
}
