// A mount daemon for tests that mount a FileSystemCore of their own: `node --import
// register-ts.mjs core-host.ts`, started by mountCore() (mount.ts) in a process group of its
// own, with an IPC channel, ahead of need (it loads while the test before runs). The test's
// first message names the core (an export of a module that makes it), the folder, the
// settings and the log file; the daemon mounts it and says ready. Then it
// answers the test's questions about the core or the mount (`inspect`), unmounts when asked,
// and when the test lets go of it (the channel closes: the test ended, or its worker did) it
// unmounts, within the settings' grace, and exits.
import { appendFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import type { Logger } from '../../src/base/log.js'
import { plainText } from '../../src/base/shown-text.js'
import { loadFuse } from '../../src/fuse/addon.js'
import { mountFileSystem, type MountHandle, type MountSettings } from '../../src/fuse/mount.js'
import type { FileSystemCore } from '../../src/vfs/core.js'

/** What the test sends first: which core, where, how. */
export interface MountRequest {
  type: 'mount'
  /** A module's file, and the name of its export that makes the core from args. */
  module: string
  make: string
  args: unknown[]
  dir: string
  settings: MountSettings
  /** Where the mount's log lines go. */
  logFile: string
}

/** A question: `what` is a dotted path from the daemon's roots (core, windows, ended); a function there is called with args. */
export interface Inspect {
  type: 'inspect' | 'unmount'
  id: number
  what?: string
  args?: unknown[]
}

export type HostReply =
  | { type: 'ready'; backend: string }
  | { type: 'failed'; message: string }
  | { type: 'answer'; id: number; value?: unknown; error?: string }

const send = (m: HostReply): Promise<void> => new Promise((resolve) => (process.connected ? process.send!(m, () => resolve()) : resolve()))

let handle: MountHandle | undefined
let leaving = false
/** Unmounted (the grace of the settings bounds it), then gone: fuse-native keeps the event loop alive. */
function leave(): void {
  if (leaving) return
  leaving = true
  const exit = (): never => process.exit(0)
  // Let go of before its mount was made: nothing to undo (a mount half made goes with the process).
  if (!handle) exit()
  setTimeout(exit, 2 * request.settings.shutdownGraceMs + 1000).unref()
  handle!.unmount().then(exit, exit)
}
process.on('disconnect', leave)
process.on('SIGTERM', leave)

const request = await new Promise<MountRequest>((resolve) => process.once('message', (m: MountRequest) => resolve(m)))
const line = (level: string) => (msg: string): void => appendFileSync(request.logFile, `core-host ${process.pid}: ${level}: ${plainText(msg)}\n`)
const log: Logger = { error: line('error'), warn: line('warn'), info: line('info'), debug() {} }
process.on('uncaughtException', (err) => {
  log.error(`uncaught: ${err.stack ?? err.message}`)
  process.exit(1)
})
let ended: 'unmounted' | 'external' | undefined
try {
  const made = (await import(pathToFileURL(request.module).href)) as Record<string, (...args: unknown[]) => FileSystemCore | Promise<FileSystemCore>>
  const core = await made[request.make]!(...request.args)
  const mounted = await mountFileSystem(core, request.dir, request.settings, log)
  handle = mounted
  void mounted.ended.then((how) => (ended = how))
  const roots: Record<string, unknown> = { core, windows: mounted.windows, get ended() { return ended } }

  process.on('message', (m: Inspect) => {
    void (async () => {
      try {
        if (m.type === 'unmount') {
          await mounted.unmount()
          return await send({ type: 'answer', id: m.id })
        }
        const names = m.what!.split('.')
        let owner: unknown
        let value: unknown = roots
        for (const name of names) [owner, value] = [value, (value as Record<string, unknown>)[name]]
        if (typeof value === 'function') value = await (value as (...a: unknown[]) => unknown).apply(owner, m.args ?? [])
        await send({ type: 'answer', id: m.id, value })
      } catch (err) {
        await send({ type: 'answer', id: m.id, error: (err as Error).message })
      }
    })()
  })
} catch (err) {
  await send({ type: 'failed', message: (err as Error).message })
  process.exit(1)
}

await send({ type: 'ready', backend: loadFuse(request.settings.fuseLibrary).backend })
