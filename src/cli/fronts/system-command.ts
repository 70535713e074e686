// Running the system's own commands (mount_nfs, umount, diskutil, mount), bounded, never
// through a shell. A command is looked up on PATH first, then in the folders macOS keeps them
// in: a launchd agent's PATH, or a user's, may lack /sbin and /usr/sbin.
import { accessSync, constants } from 'node:fs'
import path from 'node:path'
import { runBounded, type CommandResult } from '../../base/bounded-command.js'
import { LIST_MOUNTS, parseMountList, type ListedMount, type SystemCommand } from './macos-commands.js'

/** Where macOS keeps mount_nfs, umount and mount (/sbin) and diskutil (/usr/sbin). */
const SYSTEM_DIRS: readonly string[] = ['/sbin', '/usr/sbin', '/bin', '/usr/bin']

export type { CommandResult }

/** The file `name` runs from: the first executable one on PATH, then in SYSTEM_DIRS; the name itself when none is. */
export function systemCommandPath(name: string, pathEnv: string = process.env.PATH ?? ''): string {
  const dirs = [...pathEnv.split(':').filter((d) => path.isAbsolute(d)), ...SYSTEM_DIRS]
  for (const dir of dirs) {
    const file = path.join(dir, name)
    try {
      accessSync(file, constants.X_OK)
      return file
    } catch {
      // Not here: look on.
    }
  }
  return name
}

/** Runs `c` to its end or until `timeoutMs` (then it is killed); never throws. */
export function runSystemCommand(c: SystemCommand, timeoutMs: number): Promise<CommandResult> {
  return runBounded(systemCommandPath(c.command), c.args, timeoutMs, `${c.command} was not found (looked on PATH and in ${SYSTEM_DIRS.join(', ')})`)
}

/** ms `mount` may take to list the mounts (it asks the kernel only). */
const LIST_TIMEOUT_MS = 10_000

/** Every mount `mount` lists; throws when it cannot be run. */
export async function listMounts(): Promise<ListedMount[]> {
  const r = await runSystemCommand(LIST_MOUNTS, LIST_TIMEOUT_MS)
  if (!r.ok) throw new Error(`cannot list the mounts: ${r.stderr}`)
  return parseMountList(r.stdout)
}
