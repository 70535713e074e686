#!/usr/bin/env node
// transferfs: one file per command; this file only assembles them.
import { Command } from 'commander'
import { readFileSync } from 'node:fs'
import { commands } from './commands.js'

const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }

const program = new Command()
  .name('transferfs')
  .description('Mount a Transfer Service account as a folder, and use the service from the command line.')
  .version(pkg.version)
  .showHelpAfterError()

for (const register of commands) register(program)

program.parseAsync(process.argv).catch((err: unknown) => {
  process.stderr.write(`transferfs: ${err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
})
