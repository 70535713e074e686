// Each transfer's tree across refreshes of its details: the same files keep the tree they
// had (it is built on the thread every FUSE operation waits for), other files get a new
// one, and a transfer of unusually many files is named in the log once.
import { describe, expect, it } from 'vitest'
import { silentLogger } from '../../src/base/log.js'
import { TransferFileSystem } from '../../src/vfs/filesystem.js'
import { VFS_DEFAULTS } from '../../src/vfs/settings.js'
import { LARGE_TREE_FILES } from '../../src/vfs/transfer-trees.js'
import type { TreeDir } from '../../src/vfs/transfer-tree.js'
import { FakeCatalog, FakeClock, FakeContent, makeFile, makeTransfer } from './fakes.js'

function setup() {
  const catalog = new FakeCatalog()
  const clock = new FakeClock()
  const warnings: string[] = []
  const fs = new TransferFileSystem({ catalog, content: new FakeContent(), clock, log: { ...silentLogger, warn: (m) => void warnings.push(m) } })
  /** The transfer's tree as a listing of its folder finds it, and the details it was built for. */
  const look = async (): Promise<{ tree: TreeDir; details: object }> => {
    const [folder] = await fs.readdir('/inbox')
    await fs.readdir(`/inbox/${folder}`)
    const contents = fs.store.peekContents(fs.store.peekInbox()!.byName.get(folder!)!)
    if (contents?.state !== 'open') throw new Error(`the transfer is ${contents?.state}`)
    return { tree: contents.tree, details: contents.transfer }
  }
  /** Past the listing TTL, looked at (which refreshes in the background), refreshed. */
  const refresh = async (): Promise<void> => {
    clock.advance(VFS_DEFAULTS.listingTtlMs + 1)
    await look()
    await fs.store.whenIdle()
  }
  return { catalog, fs, warnings, look, refresh }
}

describe("a transfer's tree", () => {
  it('is kept when refreshed details list the same files, and built again when they change', async () => {
    const { catalog, look, refresh } = setup()
    const t = catalog.add(makeTransfer({ id: 'kept' }))
    t.files = [makeFile('kept', 'a.txt'), makeFile('kept', 'a.txt'), makeFile('kept', 'b/c.txt')]
    const first = await look()
    await refresh()
    const second = await look()
    expect(second.details).not.toBe(first.details)
    expect(second.tree).toBe(first.tree)

    t.files = [...t.files, makeFile('kept', 'a.txt')]
    await refresh()
    const third = await look()
    expect(third.tree).not.toBe(first.tree)
    expect([...third.tree.entries.keys()]).toEqual(['a.txt', 'a (2).txt', 'b', 'a (3).txt'])

    // A file whose record changed but not its name (a new download address) is a new tree too.
    t.files = t.files.map((f, i) => (i === 0 ? { ...f, downloadurl: `${f.downloadurl}?again` } : f))
    await refresh()
    const fourth = await look()
    expect(fourth.tree).not.toBe(third.tree)
    const file = fourth.tree.entries.get('a.txt')
    expect(file?.kind === 'file' && file.remote.downloadUrl.endsWith('?again')).toBe(true)
  })

  it('of unusually many files is named in the log once, however often it is refreshed', async () => {
    const { catalog, warnings, look, refresh } = setup()
    const t = catalog.add(makeTransfer({ id: 'wide1' }))
    t.files = Array.from({ length: LARGE_TREE_FILES + 1 }, (_, i) => makeFile('wide1', `f${i % 3}.bin`, 1))
    const { tree } = await look()
    expect(tree.entries.size).toBe(LARGE_TREE_FILES + 1)
    t.files = [...t.files, makeFile('wide1', 'one more.bin', 1)]
    await refresh()
    expect((await look()).tree.entries.size).toBe(LARGE_TREE_FILES + 2)
    expect(warnings).toEqual([expect.stringMatching(/^transfer wide1 holds 5001 files; its folder tree took \d+ ms to build$/)])
  })
})
