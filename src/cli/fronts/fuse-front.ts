// The FUSE front (Linux): the mount of src/fuse/, and its unmount through the FUSE helper. A
// mount whose process died is detached (lazy unmount) instead of failing.
import { stat } from 'node:fs/promises'
import path from 'node:path'
import { loadFuse } from '../../fuse/addon.js'
import { runMount } from '../../fuse/lifecycle.js'
import { checkMountPoint, FS_NAME, mountReadAheadKb } from '../../fuse/mount.js'
import { unmountWithHelper } from '../../fuse/mount-helper.js'
import { findMount } from '../../fuse/mountinfo.js'
import type { MountFront } from './mount-front.js'

/** ms: a stat that takes longer means a hung daemon, which only a lazy unmount gets rid of. */
const PROBE_MS = 3000

async function probe(dir: string): Promise<string> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('timeout'), PROBE_MS)))
  const answer = stat(dir).then(() => 'alive', (err: NodeJS.ErrnoException) => err.code ?? 'error')
  return Promise.race([answer, timeout]).finally(() => clearTimeout(timer))
}

async function unmount(dirArg: string): Promise<void> {
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
  // The daemon notices its mount is gone and ends cleanly.
  const r = await unmountWithHelper(dir, { lazy: false })
  if (!r.ok) {
    if (/busy/i.test(r.stderr)) throw new Error(`${dir} is busy: close the files and shells open in it, then try again`)
    throw new Error(`cannot unmount ${dir}: ${r.stderr}`)
  }
}

export const fuseFront: MountFront = {
  kind: 'fuse',
  async precheck(dir, loaded) {
    // A FUSE library or addon missing is said here, in the terminal, before a daemon starts.
    loadFuse(loaded.settings.fuseLibrary)
    await checkMountPoint(dir)
  },
  readAheadKb: (settings) => mountReadAheadKb(settings),
  async run(core, dir, settings, opts) {
    await runMount(core, dir, settings, { log: opts.log, dataDir: opts.dataDir, onReady: (h) => opts.onReady(h.dir) })
  },
  unmount,
}
