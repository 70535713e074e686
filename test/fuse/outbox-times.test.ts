// outbox/ as a local disk would behave where writers look: each time set on its own
// (touch -m, touch -a, and tar -x, which sets the mtime with the atime left out) keeps the
// other, an archive's mtimes survive its extraction, and special files are refused with
// EPERM. Entries are given a long settle here, so they stay in outbox/ while looked at.
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { run } from '../support/mount.js'
import { type User, useSendingMount } from '../send-mount/helpers.js'

const USER: User = { email: 'times@example.com', password: 'pw-times-123456' }
const world = useSendingMount(USER, { TRANSFERFS_SETTLE_MS: '10m' })
const sh = (script: string, ...args: string[]) => run('bash', ['-c', script, 'bash', ...args], { timeoutMs: 60_000 })
const outbox = () => path.join(world.account.mountDir, 'outbox')
/** atime and mtime in whole seconds, as `stat` gives them. */
const times = async (file: string) => (await run('stat', ['-c', '%X %Y', file])).stdout.trim()

describe('times in outbox/', () => {
  it('touch -m and touch -a each change one time and keep the other', async () => {
    const file = path.join(outbox(), 'touched', 'note.txt')
    expect((await sh('mkdir "$1" && printf x > "$2" && touch -d @1000000000 "$2"', path.dirname(file), file)).code).toBe(0)
    expect(await times(file)).toBe('1000000000 1000000000')
    expect((await run('touch', ['-m', '-d', '@1577934245', file])).code).toBe(0)
    expect(await times(file)).toBe('1000000000 1577934245')
    expect((await run('touch', ['-a', '-d', '@1500000000', file])).code).toBe(0)
    expect(await times(file)).toBe('1500000000 1577934245')
  })

  it('tar -x keeps the archive\'s mtimes', async () => {
    const src = path.join(world.src, 'archived')
    await fsp.mkdir(path.join(src, 'inner'), { recursive: true })
    await fsp.writeFile(path.join(src, 'a.txt'), 'a')
    await fsp.writeFile(path.join(src, 'inner', 'b.txt'), 'b')
    const tarball = path.join(world.src, 'archived.tar')
    expect((await sh('tar -C "$1" --mtime=@1400000000 -cf "$2" archived', world.src, tarball)).code).toBe(0)
    const r = await sh('tar -C "$1" -xf "$2"', outbox(), tarball)
    expect(r, r.stderr).toMatchObject({ code: 0 })
    for (const p of ['archived/a.txt', 'archived/inner/b.txt', 'archived/inner']) {
      expect((await run('stat', ['-c', '%Y', path.join(outbox(), p)])).stdout.trim(), p).toBe('1400000000')
    }
  })

  it('mknod of a regular file makes an empty file, as open(O_CREAT) would', async () => {
    const file = path.join(outbox(), 'made-by-mknod')
    const r = await run('python3', ['-c', 'import os, sys; os.mknod(sys.argv[1], 0o100640)', file])
    expect(r, r.stderr).toMatchObject({ code: 0 })
    expect((await run('stat', ['-c', '%F %a %s', file])).stdout.trim()).toBe('regular empty file 640 0')
  })

  it('mkfifo and mknod answer EPERM and leave nothing behind', async () => {
    for (const [cmd, args] of [['mkfifo', ['fifo']], ['mknod', ['node', 'p']]] as const) {
      const r = await run(cmd, [path.join(outbox(), args[0]), ...args.slice(1)])
      expect(r.code, cmd).not.toBe(0)
      expect(r.stderr, cmd).toMatch(/Operation not permitted/)
      await expect(fsp.lstat(path.join(outbox(), args[0]))).rejects.toMatchObject({ code: 'ENOENT' })
    }
  })

  it('ctime changes on chmod, chown, a write and a rename; a folder counts 2 links plus its subfolders', async () => {
    const dir = path.join(outbox(), 'ctimes')
    const file = path.join(dir, 'f.txt')
    expect((await sh('mkdir -p "$1/s1" "$1/s2" && printf x > "$2"', dir, file)).code).toBe(0)
    expect((await run('stat', ['-c', '%h', dir])).stdout.trim()).toBe('4')
    const ctime = async (p: string) => (await run('stat', ['-c', '%z', p])).stdout.trim()
    const steps: Array<[string, string]> = [['chmod 0600 "$1"', file], ['chown "$(id -u):$(id -g)" "$1"', file], ['printf y >> "$1"', file]]
    for (const [script, target] of steps) {
      const before = await ctime(target)
      await new Promise((r) => setTimeout(r, 20))
      expect((await sh(script, target)).code, script).toBe(0)
      expect(await ctime(target), script).not.toBe(before)
    }
    const before = await ctime(file)
    await new Promise((r) => setTimeout(r, 20))
    expect((await run('mv', [file, path.join(dir, 'g.txt')])).code).toBe(0)
    expect(await ctime(path.join(dir, 'g.txt'))).not.toBe(before)
  })
})
