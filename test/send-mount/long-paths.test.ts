// A path that fits PATH_MAX under the mount works in outbox/, however long the data
// folder's own path is: the staging tree on disk sits under that folder, so its paths
// are longer than the mount's by the difference, and the kernel takes no path of PATH_MAX
// bytes or more in one call. Here the data folder is 500 bytes deeper than the mount.
import { promises as fsp } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { removeTree } from '../support/fuse-cleanup.js'
import { run, waitFor } from '../support/mount.js'
import { md5, outboxDrained, sentRecords, transferFiles, type User, useSendingMount } from './helpers.js'

const USER: User = { email: 'long-paths@example.com', password: 'pw-long-123456' }
const DATA_ROOT = path.join(os.tmpdir(), `transferfs-test-longdata-${process.pid}`)
const DATA = path.join(DATA_ROOT, 'd'.repeat(250), 'e'.repeat(250))
// Registered before the mount's hooks, so it runs after them (vitest runs after-hooks in
// reverse): the data folder goes once its mount and daemon are gone, not while they write in it.
afterAll(() => removeTree(DATA_ROOT))
const world = useSendingMount(USER, { TRANSFERFS_DATA_DIR: DATA })

/** PATH_MAX counts the terminating NUL: the longest path one call takes. */
const LONGEST = 4095
const sh = (script: string, ...args: string[]) => run('bash', ['-c', script, 'bash', ...args], { timeoutMs: 60_000 })

/** A path below `dir` of exactly `total` bytes: folders of 200-byte names, then a file name that fills the rest. */
function longPath(dir: string, total: number, letter: string): string {
  let p = dir
  while (total - p.length > 1 + 255) p = path.join(p, letter.repeat(Math.min(200, total - p.length - 1 - 2 - 1)))
  return path.join(p, letter.repeat(total - p.length - 1))
}

describe('long paths in outbox/', () => {
  it('a file whose path under the mount is PATH_MAX - 1 bytes is written, read, changed, renamed, sent and removed', async () => {
    const entry = path.join(world.account.mountDir, 'outbox', 'deep')
    const file = longPath(entry, LONGEST, 'a')
    expect(Buffer.byteLength(file)).toBe(LONGEST)
    // The staging copy is longer than the kernel takes in one call: the case this test is for.
    expect(DATA.length + file.length - world.account.mountDir.length).toBeGreaterThan(LONGEST + 400)
    const r = await sh('mkdir -p "$(dirname "$1")" && printf "deep bytes\\n" > "$1" && cat "$1" && touch -m -d @1400000000 "$1" && chmod 0600 "$1" && stat -c "%a %Y %s" "$1"', file)
    expect(r, r.stderr).toMatchObject({ code: 0, stdout: 'deep bytes\n600 1400000000 11\n' })
    expect(await run('ls', [path.dirname(file)])).toMatchObject({ code: 0, stdout: `${path.basename(file)}\n` })

    // A second file beside it, renamed to a name as long, then the first removed: nothing of it may go.
    const other = path.join(path.dirname(file), 'b'.repeat(path.basename(file).length))
    const renamed = path.join(path.dirname(file), 'c'.repeat(path.basename(file).length))
    expect((await sh('printf "other\\n" > "$1" && mv "$1" "$2" && cat "$2" && rm "$1" 2>/dev/null; test ! -e "$1"', other, renamed)).stdout).toBe('other\n')
    expect((await sh('rm "$1" && ls "$(dirname "$1")"', file)).stdout).toBe(`${path.basename(renamed)}\n`)

    expect(await outboxDrained(world.account)).toBe(true)
    const rec = (await sentRecords(world.account)).find((x) => x.subject === 'deep')
    expect(rec).toBeDefined()
    // A folder entry's files are named by their path inside it.
    const sentName = path.relative(entry, renamed)
    expect(await transferFiles(world.client, rec!.transferid)).toEqual(new Map([[sentName, md5(Buffer.from('other\n'))]]))
  })

  it('a tree of long paths copied in with cp -a arrives whole; an empty deep tree goes with rm -r', async () => {
    const outbox = path.join(world.account.mountDir, 'outbox')
    const deepest = longPath(path.join(outbox, 'tree'), LONGEST, 'x')
    const rel = path.relative(outbox, deepest)
    const inSource = path.join(world.src, rel)
    await fsp.mkdir(path.dirname(inSource), { recursive: true })
    await fsp.writeFile(inSource, 'leaf\n')
    await fsp.writeFile(path.join(path.dirname(inSource), 'z'), 'z\n')
    const cp = await sh('cp -a "$1" "$2/" && cat "$3"', path.join(world.src, 'tree'), outbox, deepest)
    expect(cp, cp.stderr).toMatchObject({ code: 0, stdout: 'leaf\n' })
    expect(await outboxDrained(world.account)).toBe(true)
    const rec = (await sentRecords(world.account)).find((x) => x.subject === 'tree')
    expect(rec).toBeDefined()
    const inTree = path.relative('tree', rel)
    expect(await transferFiles(world.client, rec!.transferid)).toEqual(new Map([
      [inTree, md5(Buffer.from('leaf\n'))],
      [path.join(path.dirname(inTree), 'z'), md5(Buffer.from('z\n'))],
    ]))
    // What was sent leaves the staging tree by way of the trash, deep names and all.
    expect(await waitFor(async () => (await fsp.readdir(path.join(DATA, 'trash'))).length === 0, 10_000, 100)).toBe(true)
    expect(await fsp.readdir(path.join(DATA, 'outbox'))).toEqual([])

    // Folders alone are never sent: this tree stays until removed.
    const empty = path.dirname(longPath(path.join(outbox, 'empty'), LONGEST, 'y'))
    const rm = await sh('mkdir -p "$1" && test -d "$1" && rm -r "$2" && test ! -e "$2"', empty, path.join(outbox, 'empty'))
    expect(rm, rm.stderr).toMatchObject({ code: 0 })
  })
})
