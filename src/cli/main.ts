#!/usr/bin/env node
// transferfs: the program (program.ts, one file per command) run on the command line.
import { exitCodeOf } from './output/exit-codes.js'
import { reportError } from './output/errors.js'
import { buildProgram } from './program.js'

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
