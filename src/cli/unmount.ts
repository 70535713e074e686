// `transferfs unmount DIR`: unmounts; the daemon notices and ends cleanly. A mount whose
// process died is detached (lazy unmount) instead of failing.
import type { Command } from 'commander'
import { stat } from 'node:fs/promises'
import path from 'node:path'
import { FS_NAME } from '../fuse/mount.js'
import { unmountWithHelper } from '../fuse/mount-helper.js'
import { findMount } from '../fuse/mountinfo.js'

/** ms: a stat that takes longer means a hung daemon, which only a lazy unmount gets rid of. */
const PROBE_MS = 3000

async function probe(dir: string): Promise<string> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('timeout'), PROBE_MS)))
  const answer = stat(dir).then(() => 'alive', (err: NodeJS.ErrnoException) => err.code ?? 'error')
  return Promise.race([answer, timeout]).finally(() => clearTimeout(timer))
}

export async function unmount(dirArg: string): Promise<void> {
  const dir = path.resolve(dirArg)
  const m = await findMount(dir)
  if (!m) throw new Error(`${dir} is not mounted`)
  if (m.fsType !== `fuse.${FS_NAME}`) throw new Error(`${dir} is not a transferfs mount (it is ${m.fsType})`)
  const state = await probe(dir)
  if (state !== 'alive') {
    // Dead or hung daemon: nothing to end cleanly, only the kernel's mount to detach.
    const r = await unmountWithHelper(dir)
    if (!r.ok) throw new Error(`cannot detach ${dir}: ${r.stderr}`)
    return
  }
  const r = await unmountWithHelper(dir, { lazy: false })
  if (!r.ok) {
    if (/busy/i.test(r.stderr)) throw new Error(`${dir} is busy: close the files and shells open in it, then try again`)
    throw new Error(`cannot unmount ${dir}: ${r.stderr}`)
  }
}

export function register(program: Command): void {
  program
    .command('unmount')
    .alias('umount')
    .description('Unmount a transferfs mount (the mount process then ends)')
    .argument('<dir>', 'the mounted folder')
    .action(async (dir: string) => {
      await unmount(dir)
    })
}
