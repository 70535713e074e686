// The list of commands. Each module exports `register(program)` and adds one command.
import type { Command } from 'commander'
import { register as completion } from './completion.js'
import { register as config } from './config.js'
import { register as demo } from './demo.js'
import { register as download } from './download.js'
import { register as forward } from './forward.js'
import { register as inbox } from './inbox.js'
import { register as info } from './info.js'
import { register as login } from './login.js'
import { register as logout } from './logout.js'
import { register as mount } from './mount.js'
import { register as send } from './send.js'
import { register as serve } from './serve.js'
import { register as serveNfs } from './serve-nfs.js'
import { register as status } from './status.js'
import { register as unmount } from './unmount.js'
import { register as pin } from './pin.js'

export type RegisterCommand = (program: Command) => void

export const commands: RegisterCommand[] = [mount, unmount, login, logout, status, pin, inbox, info, forward, download, send, config, completion, serve, serveNfs, demo]
