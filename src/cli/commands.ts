// The list of commands. Each module exports `register(program)` and adds one command.
import type { Command } from 'commander'

export type RegisterCommand = (program: Command) => void

export const commands: RegisterCommand[] = []
