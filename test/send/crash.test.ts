// Crash at many points (the process dies: no shutdown, calls in flight never answer),
// restart on the same folders: every entry ends as exactly one complete transfer with
// the right bytes, nothing is completed twice, and only the documented orphan (an
// initialize whose answer died with the process) is ever initialized twice.
import { afterEach, describe, expect, it } from 'vitest'
import { md5, refusal } from './fake-service.js'
import { bytes, cp, cpADir, Harness } from './harness.js'

let h: Harness | null = null
afterEach(async () => {
  await h?.cleanup()
  h = null
})

const T = new Date('2021-05-06T07:08:09Z')
const FILE = bytes(3500, 21) // 4 chunks of 1 KiB
const TREE = { 'a.txt': bytes(2100, 22), 'sub/b.bin': bytes(900, 23) }
const RCPT = bytes(1500, 24)
const PLAN = bytes(700, 25)
/** A recipient folder with a contact group: sent to the address, then forwarded to the group. */
const GROUP_FOLDER = 'Team,dave@example.com'
const GROUPS = { recipientGroups: ['Team'] }

async function drop(x: Harness): Promise<void> {
  await cp(x.fs, '/big.bin', FILE)
  await cpADir(x.fs, '/Folder', TREE, T)
  await x.fs.mkdir('/carol@example.com', 0o755)
  await cp(x.fs, '/carol@example.com/note.txt', RCPT)
  await x.fs.mkdir(`/${GROUP_FOLDER}`, 0o755)
  await cp(x.fs, `/${GROUP_FOLDER}/plan.txt`, PLAN)
}

/**
 * `forwardedAgain`: the process died after a forward was served, before (true) or
 * perhaps before ('maybe') it was journaled; then the group may get the e-mail twice.
 */
async function expectAllSentOnce(x: Harness, orphanable: Set<string>, forwardedAgain: boolean | 'maybe' = false): Promise<void> {
  expect(x.service.sentAs('big.bin')).toEqual([{ 'big.bin': md5(FILE) }])
  expect(x.service.sentAs('Folder')).toEqual([{ 'a.txt': md5(TREE['a.txt']), 'sub/b.bin': md5(TREE['sub/b.bin']) }])
  expect(x.service.sentAs('note.txt')).toEqual([{ 'note.txt': md5(RCPT) }])
  expect(x.service.sentAs('plan.txt')).toEqual([{ 'plan.txt': md5(PLAN) }])
  const plan = x.service.completed().find((t) => t.req.subject === 'plan.txt')
  expect(plan?.req.to).toEqual(['dave@example.com'])
  if (forwardedAgain === 'maybe') expect([1, 2]).toContain(plan?.forwardedTo.length)
  else expect(plan?.forwardedTo).toHaveLength(forwardedAgain ? 2 : 1)
  expect(new Set(plan?.forwardedTo)).toEqual(new Set(['Team']))
  expect(x.service.completed()).toHaveLength(4)
  for (const s of ['big.bin', 'Folder', 'note.txt', 'plan.txt']) {
    expect(x.service.initializeCount(s)).toBeLessThanOrEqual(orphanable.has(s) ? 2 : 1)
  }
  expect(await x.ls()).toEqual([GROUP_FOLDER, 'carol@example.com'])
  expect(await x.ls('/carol@example.com')).toEqual([])
  expect(await x.ls(`/${GROUP_FOLDER}`)).toEqual([])
  const sent = await x.fs.sentLog.list()
  expect(sent.map((r) => r.subject).sort()).toEqual(['Folder', 'big.bin', 'note.txt', 'plan.txt'])
}

/** The process dies once Complete took effect, before its answer is journaled; then it starts again. */
async function diesAfterComplete(x: Harness): Promise<void> {
  x.service.afterCall = (c, sender) => {
    if (c.op !== 'complete') return
    sender.kill()
    void x.fs.halt()
  }
  await x.settle()
  x.service.afterCall = null
  await x.restart()
}

/** The sends at settle; a crash during a copy, with its early uploads, has a test of its own. */
const AT_SETTLE = { maxConcurrentSends: 1, uploadWhileCopying: false, ...GROUPS }

/** How many service calls a run without crash makes. */
async function callsOfCleanRun(): Promise<number> {
  const x = await Harness.create(AT_SETTLE)
  try {
    await drop(x)
    await x.settle()
    await expectAllSentOnce(x, new Set())
    return x.service.calls.length
  } finally {
    await x.cleanup()
  }
}

describe('crash and resume', () => {
  it('a crash before anything was sent: the entries are back in outbox/ and are sent', async () => {
    h = await Harness.create(GROUPS)
    await drop(h)
    await h.restart()
    expect(await h.ls()).toEqual(['Folder', GROUP_FOLDER, 'big.bin', 'carol@example.com'])
    expect(await h.readAll('/big.bin')).toEqual(FILE)
    expect((await h.fs.getattr('/Folder/a.txt')).mtime.getTime()).toBe(T.getTime())
    await h.settle()
    await expectAllSentOnce(h, new Set())
  })

  it('resuming re-sends only the chunks not yet confirmed', async () => {
    h = await Harness.create({ maxConcurrentSends: 1 })
    await cp(h.fs, '/big.bin', FILE)
    const x = h
    let n = 0
    x.service.afterCall = (call, s) => {
      if (call.op === 'chunk' && ++n === 2 && s === x.sender) {
        s.kill()
        void x.fs.halt()
      }
    }
    await h.settle()
    x.service.afterCall = null
    await h.restart()
    await h.settle()
    const chunks = h.service.calls.filter((c) => c.op === 'chunk').map((c) => c.chunk)
    // 0 and 1 confirmed before the crash; the answer to 1 died with the process, so 1 is sent again at most.
    expect(chunks.slice(0, 2)).toEqual([0, 1])
    expect(chunks.filter((c) => c === 0)).toHaveLength(1)
    expect(chunks.length).toBeLessThanOrEqual(5)
    expect(h.service.sentAs('big.bin')).toEqual([{ 'big.bin': md5(FILE) }])
    expect(h.service.initializeCount('big.bin')).toBe(1)
  })

  it('a crash at every service call, before it, after it, and a little later', async () => {
    const total = await callsOfCleanRun()
    expect(total).toBeGreaterThan(10)
    for (const mode of ['before', 'after', 'late'] as const) {
      for (let k = 0; k < total; k++) {
        const x = await Harness.create(AT_SETTLE)
        h = x
        const orphanable = new Set<string>()
        let forwardedAgain: boolean | 'maybe' = false
        x.armCrash(k, mode, (call) => {
          if (call.op === 'initialize' && mode !== 'before') orphanable.add(call.subject ?? '')
          if (call.op === 'forward' && mode !== 'before') forwardedAgain = mode === 'after' ? true : 'maybe'
        })
        await drop(x)
        await x.settle()
        x.disarmCrash()
        await x.restart()
        await x.settle()
        try {
          await expectAllSentOnce(x, orphanable, forwardedAgain)
        } catch (err) {
          throw new Error(`crash ${mode} call ${k}: ${(err as Error).message}`)
        }
        await x.cleanup()
        h = null
      }
    }
  })

  it('a crash at every service call while a folder is copied and its files go up early: sent once, into one transfer', async () => {
    const files: Record<string, Buffer> = { 'a.txt': bytes(2100, 31), 'b.txt': bytes(900, 32), 'sub/c.bin': bytes(3000, 33), 'd.txt': bytes(10, 34) }
    // `cp -r`, or after a crash the same cp again over what is there (each file rewritten);
    // a slow copy: each file's early upload is done before the next file is written.
    const copy = async (x: Harness): Promise<void> => {
      for (const dir of ['/Folder', '/Folder/sub']) await x.fs.mkdir(dir, 0o755).catch(() => undefined)
      for (const [rel, data] of Object.entries(files)) {
        const p = `/Folder/${rel}`
        const fh = await x.fs.create(p, 0o644)
        await x.fs.write(p, fh, data, 0)
        await x.fs.release(p, fh)
        await x.fs.idle()
      }
    }
    const want = Object.fromEntries(Object.entries(files).map(([rel, data]) => [rel, md5(data)]))
    const clean = await Harness.create({ uploadWhileCopying: true })
    await copy(clean)
    const early = clean.service.calls.length
    await clean.settle()
    expect(clean.service.sentAs('Folder')).toEqual([want])
    const total = clean.service.calls.length
    await clean.cleanup()
    // Files went up while the copy ran: initialize and chunks, never Complete.
    expect(early).toBeGreaterThan(Object.keys(files).length)
    expect(clean.service.calls.slice(0, early).map((c) => c.op)).not.toContain('complete')
    for (const mode of ['before', 'after', 'late'] as const) {
      for (let k = 0; k < total; k++) {
        const x = await Harness.create({ uploadWhileCopying: true })
        h = x
        let orphan = false
        x.armCrash(k, mode, (call) => {
          if (call.op === 'initialize' && mode !== 'before') orphan = true
        })
        await copy(x).catch(() => undefined)
        await x.settle()
        x.disarmCrash()
        await x.restart()
        await copy(x)
        await x.settle()
        try {
          expect(x.service.sentAs('Folder')).toEqual([want])
          expect(x.service.completed()).toHaveLength(1)
          expect(x.service.initializeCount('Folder')).toBeLessThanOrEqual(orphan ? 2 : 1)
          expect(await x.ls()).toEqual([])
        } catch (err) {
          throw new Error(`crash ${mode} call ${k}: ${(err as Error).message}`)
        }
        await x.cleanup()
        h = null
      }
    }
  })

  it('two crashes in a row, the second while resuming', async () => {
    h = await Harness.create({ maxConcurrentSends: 1, ...GROUPS })
    const x = h
    await drop(x)
    let n = 0
    x.service.afterCall = (_c, s) => {
      if (++n % 5 === 0) {
        s.kill()
        void x.fs.halt()
      }
    }
    for (let i = 0; i < 12; i++) {
      await x.settle()
      await x.restart()
    }
    x.service.afterCall = null
    await x.settle()
    expect(x.service.completed()).toHaveLength(4)
    expect(x.service.sentAs('plan.txt')).toEqual([{ 'plan.txt': md5(PLAN) }])
    expect(x.service.sentAs('big.bin')).toEqual([{ 'big.bin': md5(FILE) }])
    expect(x.service.sentAs('Folder')).toEqual([{ 'a.txt': md5(TREE['a.txt']), 'sub/b.bin': md5(TREE['sub/b.bin']) }])
    expect(x.service.sentAs('note.txt')).toEqual([{ 'note.txt': md5(RCPT) }])
  })

  it('an entry changed while the process was down is sent with its new bytes, the old transfer never completed', async () => {
    h = await Harness.create()
    const x = h
    await cp(x.fs, '/doc.txt', bytes(3000, 1))
    x.service.afterCall = (c, s) => {
      if (c.op === 'chunk' && c.chunk === 1) {
        s.kill()
        void x.fs.halt()
      }
    }
    await x.settle()
    x.service.afterCall = null
    await x.restart()
    const fh = await x.fs.open('/doc.txt', 1)
    await x.fs.write('/doc.txt', fh, Buffer.from('NEW'), 0)
    await x.fs.release('/doc.txt', fh)
    await x.settle()
    const expected = Buffer.concat([Buffer.from('NEW'), bytes(3000, 1).subarray(3)])
    expect(x.service.sentAs('doc.txt')).toEqual([{ 'doc.txt': md5(expected) }])
    expect(x.service.completed()).toHaveLength(1)
  })

  it('Complete done, its answer lost with the process, then the folder grew: the service says whether that send stands', async () => {
    for (const answer of ['sent', 'refused'] as const) {
      const x = await Harness.create({ ...GROUPS, uploadWhileCopying: false })
      try {
        await x.fs.mkdir(`/${GROUP_FOLDER}`, 0o755)
        await x.fs.mkdir(`/${GROUP_FOLDER}/Sub`, 0o755)
        await cp(x.fs, `/${GROUP_FOLDER}/Sub/a.txt`, PLAN)
        await diesAfterComplete(x)
        await cp(x.fs, `/${GROUP_FOLDER}/Sub/b.txt`, RCPT)
        // Refused: say the password changed since; the transfer cannot be asked about.
        if (answer === 'refused') x.service.failNext('details', () => refusal('PasswordRequired', 401))
        await x.settle()
        const grown = { 'a.txt': md5(PLAN), 'b.txt': md5(RCPT) }
        // The first Complete took effect either way: the folder as it was is sent, then as it is.
        expect(x.service.sentAs('Sub')).toEqual([{ 'a.txt': md5(PLAN) }, grown])
        const [older, newer] = x.service.completed()
        expect(newer?.forwardedTo).toEqual(['Team'])
        const records = (await x.fs.sentLog.list()).filter((r) => r.subject === 'Sub')
        if (answer === 'sent') {
          // Known sent: it stands, recorded, its group told too.
          expect(older?.forwardedTo).toEqual(['Team'])
          expect(records.map((r) => r.transferid)).toEqual([older?.id, newer?.id])
        } else {
          // Not known: dropped as if never completed; only the new send is recorded.
          expect(older?.forwardedTo).toEqual([])
          expect(records.map((r) => r.transferid)).toEqual([newer?.id])
        }
        expect(await x.ls(`/${GROUP_FOLDER}`)).toEqual([])
      } finally {
        await x.cleanup()
      }
    }
  })

  it('Complete done, its answer lost with the process, then the folder removed: the sent transfer is recorded, not abandoned', async () => {
    h = await Harness.create({ uploadWhileCopying: false })
    const x = h
    await x.fs.mkdir('/Gone', 0o755)
    await cp(x.fs, '/Gone/a.txt', PLAN)
    await diesAfterComplete(x)
    // Removed before its resumed send runs.
    await x.fs.unlink('/Gone/a.txt')
    await x.fs.rmdir('/Gone')
    await x.settle()
    const [sent] = x.service.completed()
    expect(x.service.completed()).toHaveLength(1)
    expect((await x.fs.sentLog.list()).map((r) => r.transferid)).toEqual([sent?.id])
    expect(x.service.calls.filter((c) => c.op === 'details')).toHaveLength(1)
  })

  it('a file being written when the process died is held, not sent half-written, until copied again or renamed', async () => {
    h = await Harness.create()
    const x = h
    const fh = await x.fs.create('/movie.mkv', 0o644)
    await x.fs.write('/movie.mkv', fh, bytes(2000), 0)
    await x.fs.mkdir('/Album', 0o755)
    const fh2 = await x.fs.create('/Album/1.jpg', 0o644)
    await x.fs.write('/Album/1.jpg', fh2, bytes(700, 2), 0)
    await x.restart()
    await x.settle()
    expect(x.service.calls).toEqual([])
    expect(await x.ls()).toEqual(['Album', 'movie.mkv'])
    const st = x.fs.status().entries.find((e) => e.name === 'movie.mkv')
    expect(st).toMatchObject({ state: 'waiting' })
    expect(st?.note).toContain('may be incomplete')
    // Held across another restart too.
    await x.restart()
    await x.settle()
    expect(x.service.calls).toEqual([])
    // Copied again: sent with the full bytes. Renamed: sent as it is.
    await x.fs.unlink('/movie.mkv')
    await cp(x.fs, '/movie.mkv', bytes(5000))
    await x.fs.rename('/Album', '/Album 2024')
    await x.settle()
    expect(x.service.sentAs('movie.mkv')).toEqual([{ 'movie.mkv': md5(bytes(5000)) }])
    expect(x.service.sentAs('Album 2024')).toEqual([{ '1.jpg': md5(bytes(700, 2)) }])
    await x.restart()
    await x.settle()
    expect(x.service.completed()).toHaveLength(2)
  })
})
