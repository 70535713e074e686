// Damaged state files met by a real mount and the command line: a pins.json cut short, one
// with entries that are not pins, and one whose file size is not a number are each set aside
// (renamed with the time), the mount starts with the pins that validate and says so in
// `.status`; a config.json that is not JSON is named by file:line:column in the error, and
// none of its text (an API key) is shown.
import { readdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run, unmountAll, waitForExit } from '../support/mount.js'
import { startTestService, type TestService } from '../support/service.js'
import { cli, login, mount, transferFolder, useAccount, type Account } from './harness.js'
import { pinEntries, pinEntriesWhen, made, state, type Made } from './pinning.js'

let service: TestService
let account: Account
let first: Made
let second: Made
/** pins.json as the mount wrote it with both transfers pinned. */
let good: string

const dataDir = (): string => path.join(account.home, 'data')
const pinsFile = (): string => path.join(dataDir(), 'pins.json')

beforeAll(async () => {
  service = await startTestService()
  first = await made(service, 'First pinned', [{ name: 'one.bin', size: 300_000 }])
  second = await made(service, 'Second pinned', [{ name: 'two.bin', size: 200_000 }, { name: 'three.bin', size: 1000 }])
  account = await useAccount(service)
  await login(service)
  const pid = await mount(account)
  for (const m of [first, second]) {
    const r = await cli(['pin', await transferFolder(account.mountDir, m.id)])
    if (r.code !== 0) throw new Error(`pin: ${r.stderr}`)
  }
  await pinEntriesWhen((e) => e.length === 2 && e.every((x) => x.state === 'pinned'), 60_000)
  const off = await cli(['unmount', account.mountDir])
  if (off.code !== 0) throw new Error(`unmount: ${off.stderr}`)
  await waitForExit(pid, 15_000)
  good = await readFile(pinsFile(), 'utf8')
}, 300_000)

afterAll(async () => {
  await unmountAll()
  await service?.close()
})

/** Mounts over a pins.json of `text`; the names of the files set aside, `.status`, and the pins status lists. */
async function mountOver(text: string): Promise<{ aside: string[]; status: string; pinned: string[] }> {
  for (const n of await readdir(dataDir())) if (n.startsWith('pins.json')) await rm(path.join(dataDir(), n))
  await writeFile(pinsFile(), text)
  const pid = await mount(account)
  try {
    const aside = (await readdir(dataDir())).filter((n) => n.startsWith('pins.json.damaged-'))
    const status = (await run('cat', [path.join(account.mountDir, '.status')])).stdout
    const pinned = (await pinEntries()).map((e) => e.name).sort()
    return { aside, status, pinned }
  } finally {
    await cli(['unmount', account.mountDir])
    await waitForExit(pid, 15_000)
  }
}

const labelOf = (m: Made): RegExp => new RegExp(`\\(${m.id}\\)$`)

describe('a damaged pins.json', () => {
  it('cut short: set aside, the pins before the cut kept, the mount starts and says so', async () => {
    // Cut in the middle of the second pin.
    const cut = good.slice(0, good.indexOf('Second pinned') + 5)
    const r = await mountOver(cut)
    expect(r.aside).toHaveLength(1)
    expect(r.aside[0]).toMatch(/^pins\.json\.damaged-\d{8}T\d{6}Z$/)
    expect(await readFile(path.join(dataDir(), r.aside[0]!), 'utf8')).toBe(cut)
    expect(r.pinned).toHaveLength(1)
    expect(r.pinned[0]).toMatch(labelOf(first))
    expect(r.status).toMatch(/pins: .*pins\.json:\d+:\d+: not valid JSON .*set aside as .*pins\.json\.damaged-\d{8}T\d{6}Z; 1 pin kept, 1 dropped/)
  }, 120_000)

  it('with entries that are not pins ([null]): set aside, every pin kept, the nulls counted', async () => {
    const parsed = JSON.parse(good) as { version: number; pins: unknown[] }
    const r = await mountOver(JSON.stringify({ ...parsed, pins: [null, ...parsed.pins, null] }))
    expect(r.aside).toHaveLength(1)
    expect(r.pinned).toHaveLength(2)
    expect(r.status).toMatch(/pins: .*pins\.json: 2 of 4 entries are not pins; set aside as .*; 2 pins kept, 2 dropped/)
  }, 120_000)

  it('with a file size that is not a number: set aside, that pin dropped, the other kept', async () => {
    const parsed = JSON.parse(good) as { version: number; pins: Array<{ label: string; files: Array<{ size: unknown }> }> }
    const bad = parsed.pins.find((p) => labelOf(second).test(p.label))!
    bad.files[0]!.size = 'NaN'
    const r = await mountOver(JSON.stringify(parsed))
    expect(r.aside).toHaveLength(1)
    expect(r.pinned).toHaveLength(1)
    expect(r.pinned[0]).toMatch(labelOf(first))
    expect(r.status).toMatch(/1 of 2 entries are not pins; set aside as .*; 1 pin kept, 1 dropped/)
  }, 120_000)

  it('a mount after the one that set it aside starts clean: the pins saved again, nothing more set aside', async () => {
    const pid = await mount(account)
    try {
      expect(await state(await transferFolder(account.mountDir, first.id))).toBe('pinned')
      const status = (await run('cat', [path.join(account.mountDir, '.status')])).stdout
      expect(status).not.toMatch(/set aside/)
      expect((await readdir(dataDir())).filter((n) => n.startsWith('pins.json.damaged-'))).toHaveLength(1)
    } finally {
      await cli(['unmount', account.mountDir])
      await waitForExit(pid, 15_000)
    }
  }, 120_000)
})

describe('a damaged config.json', () => {
  it('is named by file:line:column, and none of its text is shown', async () => {
    const configFile = path.join(account.home, 'config', 'config.json')
    const secret = 'local-4a39f00dbeefcafe'
    await writeFile(configFile, `{\n  "logLevel": "info",\n  "apiKey": ${secret}\n}\n`)
    try {
      for (const args of [['status'], ['config', 'show'], ['config', 'set', 'logLevel', 'debug']]) {
        const r = await cli(args)
        expect(r.code, args.join(' ')).not.toBe(0)
        expect(r.stderr, args.join(' ')).toContain(`${configFile}:3:13: not valid JSON`)
        for (const piece of [secret.slice(0, 5), secret.slice(6, 10), 'apiKey', 'logLevel', 'info']) expect(r.stderr + r.stdout, args.join(' ')).not.toContain(piece)
      }
    } finally {
      await rm(configFile, { force: true })
    }
  }, 120_000)
})
