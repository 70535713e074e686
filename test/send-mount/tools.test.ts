// Sending through a real mount with the tools people use: cp, cp -a, rsync -a, mv, tar -x
// and dd into outbox/ each end as exactly one transfer whose files match the sources by
// MD5; a recipient folder's transfer reaches its recipients; a second rsync -a of the same
// tree copies nothing; files copied into a sent/ folder are added to that transfer;
// forward both ways; a refused send shows its reason in .status and goes once fixed.
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { run, waitFor } from '../support/mount.js'
import { cli } from '../mount/harness.js'
import { makeTree, md5, outboxDrained, sentRecords, transferFiles, type User, useSendingMount } from './helpers.js'

// Two recipients at most: a third makes the service refuse the send (TooManyRecipients).
const USER: User = { email: 'sender@example.com', password: 'pw-sender-123456' }
const world = useSendingMount({ ...USER, maxrecipients: 2, contactgroups: [{ name: 'Team', emails: ['erin@example.com', 'frank@example.com'] }] })
let tree: Map<string, string>
const sh = (script: string, ...args: string[]) => run('bash', ['-c', script, 'bash', ...args], { timeoutMs: 60_000 })
const outbox = () => path.join(world.account.mountDir, 'outbox')

beforeAll(async () => {
  tree = await makeTree(path.join(world.src, 'tree'), 1)
})

/** The one record of the sent log with this subject (and that there is exactly one). */
async function onlyTransfer(subject: string): Promise<string> {
  const recs = (await sentRecords(world.account)).filter((r) => r.subject === subject)
  expect(recs.map((r) => r.subject)).toEqual([subject])
  return recs[0]!.transferid
}

describe('sending with the usual tools', () => {
  it('cp, cp -a, rsync -a, mv, tar -x and dd into outbox/ each make exactly one transfer with the right bytes', async () => {
    const single = Buffer.alloc(2_500_000, 9)
    await fsp.writeFile(path.join(world.src, 'single.bin'), single)
    await fsp.writeFile(path.join(world.src, 'moved.bin'), single.subarray(1000))
    expect((await sh('tar -C "$1" -cf "$2" tree', world.src, path.join(world.src, 'tree.tar'))).code).toBe(0)
    await world.service.controls.resetCounters()
    const steps = [
      sh('cp "$1/single.bin" "$2/cp.bin"', world.src, outbox()),
      sh('cp -a "$1/tree" "$2/cp-a"', world.src, outbox()),
      sh('rsync -a "$1/tree/" "$2/rsync-a/"', world.src, outbox()),
      sh('mv "$1/moved.bin" "$2/mv.bin"', world.src, outbox()),
      sh('mkdir "$2/tar-x" && tar -C "$2/tar-x" -xf "$1/tree.tar"', world.src, outbox()),
      sh('dd if="$1/single.bin" of="$2/dd.bin" bs=64k status=none', world.src, outbox()),
    ]
    for (const r of await Promise.all(steps)) expect(r.stderr).toBe('')
    expect(await outboxDrained(world.account)).toBe(true)
    const folderTree = new Map([...tree].map(([k, v]) => [k, v]))
    const tarTree = new Map([...tree].map(([k, v]) => [`tree/${k}`, v]))
    const expected: Array<[string, Map<string, string>]> = [
      ['cp.bin', new Map([['cp.bin', md5(single)]])],
      ['cp-a', folderTree],
      ['rsync-a', folderTree],
      ['mv.bin', new Map([['mv.bin', md5(single.subarray(1000))]])],
      ['tar-x', tarTree],
      ['dd.bin', new Map([['dd.bin', md5(single)]])],
    ]
    for (const [subject, files] of expected) {
      const id = await onlyTransfer(subject)
      expect(await transferFiles(world.client, id)).toEqual(files)
    }
    // Exactly one transfer per entry at the service too (no orphan initialized on the way).
    const c = await world.service.controls.counters()
    expect(c.routes.initialize).toBe(expected.length)
  })

  it('a recipient folder sends each entry to its recipients', async () => {
    await fsp.writeFile(path.join(world.src, 'for-alice.txt'), 'for alice\n')
    expect((await sh('mkdir -p "$2/alice@example.com,bob@example.com" && cp "$1/for-alice.txt" "$2/alice@example.com,bob@example.com/"', world.src, outbox())).code).toBe(0)
    expect(await outboxDrained(world.account)).toBe(true)
    const id = await onlyTransfer('for-alice.txt')
    const mail = (await world.service.controls.mail()).filter((m) => m.transferid === id && m.kind === 'recipient').map((m) => m.to).sort()
    expect(mail).toEqual(['alice@example.com', 'bob@example.com'])
  })

  it("a folder named after one of the account's contact groups sends to the group's members", async () => {
    await fsp.writeFile(path.join(world.src, 'for-team.txt'), 'for the team\n')
    expect((await sh('mkdir -p "$2/team" && cp "$1/for-team.txt" "$2/team/"', world.src, outbox())).code).toBe(0)
    expect(await outboxDrained(world.account)).toBe(true)
    const id = await onlyTransfer('for-team.txt')
    // Only forward resolves group names: the transfer is completed link-only, then forwarded to the group.
    const mail = (await world.service.controls.mail()).filter((m) => m.transferid === id).map((m) => `${m.kind} ${m.to}`).sort()
    expect(mail).toEqual(['forward erin@example.com', 'forward frank@example.com'])
  })

  it('a second rsync -a of the same tree copies nothing (times are kept)', async () => {
    // A hidden top-level name waits until renamed, so both runs see the staged copy.
    const first = await sh('rsync -a --stats "$1/tree/" "$2/.staged/"', world.src, outbox())
    expect(first.stdout).toMatch(/Number of regular files transferred: 4/)
    const again = await sh('rsync -a --stats "$1/tree/" "$2/.staged/"', world.src, outbox())
    expect(again.code).toBe(0)
    expect(again.stdout).toMatch(/Number of regular files transferred: 0/)
    const st = await fsp.stat(path.join(outbox(), '.staged', 'a.txt'))
    expect(st.mtime.toISOString()).toBe('2020-01-02T03:04:05.000Z')
    await fsp.rename(path.join(outbox(), '.staged'), path.join(outbox(), 'staged'))
    expect(await outboxDrained(world.account)).toBe(true)
    expect(await transferFiles(world.client, await onlyTransfer('staged'))).toEqual(tree)
  })

  it('files copied into a sent/ folder are added to that transfer', async () => {
    const id = await onlyTransfer('cp.bin')
    const folder = (await fsp.readdir(path.join(world.account.mountDir, 'sent'))).find((n) => n.endsWith(`(${id})`))
    expect(folder).toBeDefined()
    const dir = path.join(world.account.mountDir, 'sent', folder!)
    expect((await sh('cp "$1/for-alice.txt" "$2/" && rsync -a "$1/tree/docs" "$2/"', world.src, dir)).code).toBe(0)
    // Shown at once, before it is uploaded; then in the transfer itself.
    expect((await fsp.readdir(dir)).sort()).toEqual(expect.arrayContaining(['cp.bin', 'for-alice.txt', 'docs']))
    const want = new Map([['cp.bin', md5(Buffer.alloc(2_500_000, 9))], ['for-alice.txt', md5(Buffer.from('for alice\n'))],
      ['docs/report.pdf', tree.get('docs/report.pdf')!], ['docs/deep/raw.csv', tree.get('docs/deep/raw.csv')!]])
    expect(await waitFor(async () => (await transferFiles(world.client, id)).size === 4, 30_000)).toBe(true)
    expect(await transferFiles(world.client, id)).toEqual(want)
    expect((await sentRecords(world.account)).filter((r) => r.transferid === id)).toHaveLength(1)
    // The added files read back through the mount once they live at the service.
    expect(await waitFor(async () => !(await fsp.readdir(path.join(world.account.home, 'data', 'additions', 'outbox', id)).catch(() => [])).length, 30_000)).toBe(true)
    expect(md5(await fsp.readFile(path.join(dir, 'docs', 'deep', 'raw.csv')))).toBe(tree.get('docs/deep/raw.csv'))
    // A second rsync -a into a sent folder copies nothing while its copy is staged (a hidden name waits).
    const first = await sh('rsync -a --stats "$1/tree/" "$2/.again/"', world.src, dir)
    expect(first.stdout).toMatch(/Number of regular files transferred: 4/)
    const again = await sh('rsync -a --stats "$1/tree/" "$2/.again/"', world.src, dir)
    expect(again.code).toBe(0)
    expect(again.stdout).toMatch(/Number of regular files transferred: 0/)
  })

  it('forward through `transferfs forward` and through .forward adds the recipients', async () => {
    const id = await onlyTransfer('dd.bin')
    const folder = (await fsp.readdir(path.join(world.account.mountDir, 'sent'))).find((n) => n.endsWith(`(${id})`))!
    const r = await cli(['forward', path.join(world.account.mountDir, 'sent', folder), 'carol@example.com'])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const w = await sh('echo dave@example.com > "$1/.forward"', path.join(world.account.mountDir, 'sent', folder))
    expect(w.code).toBe(0)
    const bad = await sh('echo "no address" > "$1/.forward"', path.join(world.account.mountDir, 'sent', folder))
    expect(bad.code).not.toBe(0)
    const mail = (await world.service.controls.mail()).filter((m) => m.transferid === id && m.kind === 'forward').map((m) => m.to).sort()
    expect(mail).toEqual(['carol@example.com', 'dave@example.com'])
    const details = await world.client.transfers.details(id, { filesLimit: -1 })
    expect((details.recipients ?? []).map((x) => x.email).sort()).toEqual(['carol@example.com', 'dave@example.com'])
  })

  it('a refused send shows its reason in .status and `transferfs status`, and goes once the folder is renamed', async () => {
    const three = 'ann@example.com,ben@example.com,cat@example.com'
    expect((await sh('mkdir "$2/$3" && cp "$1/for-alice.txt" "$2/$3/refused.txt"', world.src, outbox(), three)).code).toBe(0)
    const statusFile = path.join(world.account.mountDir, '.status')
    expect(await waitFor(async () => /failed\s+.*refused\.txt[\s\S]*error: TooManyRecipients/.test(await fsp.readFile(statusFile, 'utf8')), 20_000)).toBe(true)
    // `transferfs status` reads status.json, which the mount rewrites within a second of a
    // change: read right after .status, it may still show the entry before its send failed.
    type StatusJson = { mounted: boolean; entries: Array<{ name: string; state: string; lastError: string | null }> }
    let parsed: StatusJson | undefined
    const refused = () => parsed?.entries.find((e) => e.name.endsWith('refused.txt'))
    expect(await waitFor(async () => {
      parsed = JSON.parse((await cli(['status', '--json'])).stdout) as StatusJson
      return refused()?.state === 'failed'
    }, 5000)).toBe(true)
    expect(parsed!.mounted).toBe(true)
    expect(refused()).toMatchObject({ state: 'failed', lastError: expect.stringMatching(/TooManyRecipients/) })
    await fsp.rename(path.join(outbox(), three), path.join(outbox(), 'ann@example.com,ben@example.com'))
    expect(await outboxDrained(world.account)).toBe(true)
    const id = await onlyTransfer('refused.txt')
    const mail = (await world.service.controls.mail()).filter((m) => m.transferid === id && m.kind === 'recipient').map((m) => m.to).sort()
    expect(mail).toEqual(['ann@example.com', 'ben@example.com'])
    // The status files are written once a second: the done entry shows up within that.
    const done = /done\s+ann@example.com,ben@example.com\/refused.txt/
    expect(await waitFor(async () => done.test((await cli(['status', '--once'])).stdout), 10_000, 500)).toBe(true)
  })
})
