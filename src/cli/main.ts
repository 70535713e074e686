#!/usr/bin/env node
// transferfs: the program (program.ts, one file per command) run on the command line.
// A secret given as a flag is taken off the arguments every user can see first, before
// the rest of the program is even loaded (secret-arguments.ts).
import { hideSecretArguments } from './secret-arguments.js'

hideSecretArguments()

const { exitCodeOf } = await import('./output/exit-codes.js')
const { reportError } = await import('./output/errors.js')
const { buildProgram } = await import('./program.js')

const program = buildProgram()

// `transferfs inbox | head`: the reader went away, which is not an error of ours.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0)
  throw err
})

program.parseAsync(process.argv).catch((err: unknown) => {
  reportError(err)
  process.exit(exitCodeOf(err))
})
