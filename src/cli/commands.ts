// The list of commands. Each module exports `register(program)` and adds one command.
import type { Command } from 'commander'
import { register as demo } from './demo.js'
import { register as login } from './login.js'
import { register as logout } from './logout.js'
import { register as mount } from './mount.js'
import { register as serve } from './serve.js'
import { register as unmount } from './unmount.js'

export type RegisterCommand = (program: Command) => void

export const commands: RegisterCommand[] = [mount, unmount, login, logout, serve, demo]
