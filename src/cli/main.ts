#!/usr/bin/env node
// transferfs: one file per command; this file only assembles them.
import { Command } from 'commander'
import { applyFolderFlags } from '../config/paths.js'
import { commands } from './commands.js'
import { exitCodeOf } from './output/exit-codes.js'
import { reportError, usageExits } from './output/errors.js'
import { VERSION } from '../version.js'

const program = new Command()
  .name('transferfs')
  .description('Mount a Transfer Service account as a folder, and use the service from the command line.')
  .version(VERSION)
  .showHelpAfterError()

// Set before the commands are added: commander copies it into each of them, so a usage
// error anywhere exits with EXIT.usage (2) and --help / --version with 0.
usageExits(program)
// `transferfs inbox | head`: the reader went away, which is not an error of ours.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0)
  throw err
})
// --config-dir / --cache-dir / --data-dir become their TRANSFERFS_*_DIR variables before any action.
program.hook('preAction', (_program, command) => applyFolderFlags(command.optsWithGlobals()))
for (const register of commands) register(program)

program.parseAsync(process.argv).catch((err: unknown) => {
  reportError(err)
  process.exit(exitCodeOf(err))
})
