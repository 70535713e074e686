// Failed mounts, for real: the error says why and the way out. A normal user's
// `transferfs mount --allow-other` without user_allow_other in /etc/fuse.conf; a folder
// another file system is mounted on (a cause the machine's facts cannot tell, so the
// library's words and where to look). And unmounting through the helper found by name.
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { unmount } from '../../src/cli/unmount.js'
import { findMount } from '../../src/fuse/mountinfo.js'
import { memory } from './fixtures/cores.js'
import { isMounted, mountCore, run, tempDir, TS_REGISTER, useMounts, waitFor } from '../support/mount.js'
import { ensureNormalUser, mountsUnder, normalUserSkipReason, removeUserFolders, runAs, userAccount } from '../../scripts/support/normal-user.js'
import { startTestService, type TestService } from '../support/service.js'
import { CLI } from '../mount/harness.js'

useMounts()

const FUSE_CONF = '/etc/fuse.conf'
const ALLOWS_OTHER = /^\s*user_allow_other\s*$/m

/** The file as it was before a test changed it; put back after the test, or at exit if the process ends first. */
let savedConf: Buffer | undefined
function restoreConfSync(): void {
  if (savedConf === undefined) return
  writeFileSync(FUSE_CONF, savedConf)
  savedConf = undefined
}
process.once('exit', restoreConfSync)

/** Makes /etc/fuse.conf lack user_allow_other (commenting the line out) for one test; a no-op when it lacks it already. */
async function withoutUserAllowOther(): Promise<void> {
  const original = await readFile(FUSE_CONF).catch(() => undefined)
  if (original === undefined || !ALLOWS_OTHER.test(original.toString('utf8'))) return
  savedConf = original
  await writeFile(FUSE_CONF, original.toString('utf8').replace(/^(\s*user_allow_other\s*)$/gm, '#$1'))
}

describe('a normal user\'s mount', () => {
  const skip = normalUserSkipReason()
  let service: TestService | undefined
  afterEach(async () => {
    restoreConfSync()
    await removeUserFolders()
    await service?.close()
    service = undefined
  })

  it.skipIf(skip !== null)('with --allow-other and no user_allow_other in /etc/fuse.conf says to add it or turn allowOther off', async () => {
    const before = await readFile(FUSE_CONF).catch(() => undefined)
    const user = await ensureNormalUser()
    service = await startTestService()
    const { home, env } = await userAccount(user, service)
    const cli = (args: string[], input?: string) => runAs(user, process.execPath, ['--import', TS_REGISTER, CLI, ...args], { env, input, timeoutMs: 90_000 })
    const login = await cli(['login', '--email', service.user.email, '--password-stdin'], `${service.user.password}\n`)
    expect(login.code, login.stderr).toBe(0)

    await withoutUserAllowOther()
    expect(ALLOWS_OTHER.test(await readFile(FUSE_CONF, 'utf8').catch(() => ''))).toBe(false)
    // Each library runs a helper of its own name (libfuse 2 the fusermount link, here).
    for (const library of ['libfuse3', 'libfuse2']) {
      const mnt = path.join(home, `mnt-${library}`)
      const r = await cli(['mount', mnt, '--allow-other', '--fuse-library', library])
      expect(r.code, r.stderr).not.toBe(0)
      expect(r.stderr).toContain(`cannot mount ${mnt}: allowOther (--allow-other) is refused to users other than root unless /etc/fuse.conf has a line \`user_allow_other\``)
      expect(r.stderr).toContain('mount without --allow-other (allowOther off)')
      expect(await mountsUnder(home)).toEqual([])
    }

    restoreConfSync()
    expect(await readFile(FUSE_CONF).catch(() => undefined)).toEqual(before)
  })
})

describe('mounting as root', () => {
  let covered: string | undefined
  afterEach(async () => {
    if (covered && (await findMount(covered))?.fsType === 'tmpfs') await run('umount', ['-l', covered])
    covered = undefined
  })

  it.skipIf(process.getuid?.() !== 0)('on a folder another file system is mounted on: the library\'s words, and where its messages are', async () => {
    const dir = path.join(await tempDir(), 'mnt')
    await mkdir(dir)
    covered = dir
    expect((await run('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir])).code).toBe(0)
    const err = await mountCore(memory(), { dir }).then(
      () => new Error('mounted'),
      (e: Error) => e,
    )
    expect(err.message).toBe(`cannot mount ${dir}: Mountpoint in use (no known cause found on this machine; the FUSE library's own messages are ` +
      `on the mount's error output: mount.log in transferfs' data folder for a background mount, or run \`transferfs mount ${dir} --foreground --log-level debug\`)`)
    expect((await findMount(dir))?.fsType).toBe('tmpfs')
  })
})

describe('unmounting with the helper found by name', () => {
  it('`transferfs unmount` ends a live mount', async () => {
    const m = await mountCore(memory({ files: [['/a.txt', 'a']] }))
    expect((await run('cat', [path.join(m.dir, 'a.txt')])).stdout).toBe('a')
    await unmount(m.dir)
    expect(await waitFor(async () => (await m.inspect('ended')) === 'external', 5000)).toBe(true)
    expect(await waitFor(async () => !(await isMounted(m.dir)), 5000)).toBe(true)
  })
})
