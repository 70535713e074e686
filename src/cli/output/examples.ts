// The examples a command's --help ends with. They are kept with the command as well as
// handed to commander's help, so that the manual page (src/cli/manual.ts) prints the very
// lines --help prints, from the same list.
import type { Command } from 'commander'

const EXAMPLES = new WeakMap<Command, readonly string[]>()

/** Ends `cmd`'s --help with "Examples:" and one `$ <command line>` per example. */
export function addExamples(cmd: Command, examples: readonly string[]): Command {
  // A second list would print a second "Examples:" block: one list per command.
  if (EXAMPLES.has(cmd)) throw new Error(`${cmd.name()}: examples added twice`)
  EXAMPLES.set(cmd, [...examples])
  return cmd.addHelpText('after', `\nExamples:\n${examples.map((e) => `  $ ${e}`).join('\n')}\n`)
}

/** The examples given to addExamples for `cmd` (none when it has none). */
export function examplesOf(cmd: Command): readonly string[] {
  return EXAMPLES.get(cmd) ?? []
}
