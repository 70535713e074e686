// The setuid helper that mounts and unmounts FUSE for users who are not root: fusermount3
// (fuse3) or fusermount (fuse 2, or a link to fusermount3 that only some distributions
// add). Which names exist differs between distributions, and a normal user's PATH may
// lack the folder the helper is in, so both names are looked for in PATH and in the
// usual bin folders, and unmounting goes through whichever one is there.
import { realpathSync, statSync } from 'node:fs'
import path from 'node:path'
import { runBounded, type CommandResult } from '../base/bounded-command.js'

/** Searched in this order: fusermount3 first, as fuse3 is what current systems install. */
export const HELPER_NAMES = ['fusermount3', 'fusermount'] as const
/** Where packages put the helper, whatever PATH says. */
export const BIN_DIRS: readonly string[] = ['/bin', '/usr/bin', '/usr/local/bin']

export interface MountHelper {
  name: (typeof HELPER_NAMES)[number]
  /** Where it was found under that name (maybe a link: Debian's fusermount points at fusermount3). */
  path: string
  /** The file itself, links resolved: what `chmod u+s` would be run on. */
  file: string
  /** Owned by root with the setuid bit: only then can it mount for a user who is not root. */
  setuidRoot: boolean
}

export interface HelperSearch {
  /** Default: this process's PATH. */
  pathEnv?: string
  /** Default: BIN_DIRS. */
  dirs?: readonly string[]
}

/**
 * Every helper found, each file once per name: /bin and /usr/bin are often the same folder,
 * and a fusermount that links to fusermount3 still counts as fusermount (libfuse 2 runs that name).
 */
export function findMountHelpers(search: HelperSearch = {}): MountHelper[] {
  const fromPath = (search.pathEnv ?? process.env.PATH ?? '').split(':').filter((d) => path.isAbsolute(d))
  const dirs = [...new Set([...fromPath, ...(search.dirs ?? BIN_DIRS)])]
  const found = new Map<string, MountHelper>()
  for (const name of HELPER_NAMES) {
    for (const dir of dirs) {
      try {
        const file = realpathSync(path.join(dir, name))
        const st = statSync(file)
        if (!st.isFile() || (st.mode & 0o111) === 0 || found.has(`${name}\0${file}`)) continue
        found.set(`${name}\0${file}`, { name, path: path.join(dir, name), file, setuidRoot: st.uid === 0 && (st.mode & 0o4000) !== 0 })
      } catch {
        // Not there (or not readable): look on.
      }
    }
  }
  return [...found.values()]
}

/** The helper to run: one that works for this user if there is one, fusermount3 before fusermount. */
export function mountHelperCommand(helpers: readonly MountHelper[] = findMountHelpers()): string {
  // Unmounting as a normal user needs the setuid bit; root can run either.
  return (helpers.find((h) => h.setuidRoot) ?? helpers[0])?.path ?? 'fusermount3'
}

/** ms: how long the helper may take. It unmounts in a blink; one that takes longer is stuck (e.g. on a mount that does not answer). */
export const UNMOUNT_HELPER_TIMEOUT_MS = 10_000

/**
 * `fusermount -uz DIR` (or `-u` with lazy: false) with the helper that exists here; never
 * throws, never waits past timeoutMs (the helper is killed then). stderr says why it failed,
 * or that no helper was found at all.
 */
export function unmountWithHelper(dir: string, opts: { lazy?: boolean; timeoutMs?: number } = {}): Promise<CommandResult> {
  const helpers = findMountHelpers()
  if (helpers.length === 0) return Promise.resolve({ ok: false, stdout: '', stderr: 'no FUSE mount helper (fusermount3 or fusermount) is installed: install the fuse3 package' })
  const command = mountHelperCommand(helpers)
  return runBounded(command, [opts.lazy === false ? '-u' : '-uz', dir], opts.timeoutMs ?? UNMOUNT_HELPER_TIMEOUT_MS)
}
