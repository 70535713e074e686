#!/usr/bin/env node
// transferfs: one file per command; this file only assembles them.
import { Command } from 'commander'
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
for (const register of commands) register(program)

program.parseAsync(process.argv).catch((err: unknown) => {
  reportError(err)
  process.exit(exitCodeOf(err))
})
