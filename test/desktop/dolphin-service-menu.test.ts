// Dolphin's service menus (desktop/dolphin/*.desktop): desktop-file-validate passes on them, and
// each action's Exec line, expanded on sample paths as Dolphin expands it (%f one path, %F each
// selected path its own argument), runs and has its effect on a real mount of the local service:
// Keep, Stop keeping and Free up space as the state attribute shows them; Copy link on a real X
// clipboard (Xvfb, read back with xclip). What only a window would show goes through programs on
// PATH that record what they were asked (the browser for Open in browser, kdialog for Show
// details, the send dialog, notify-send), since Dolphin itself is not run here.
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REPO, run, tempDir, TS_REGISTER, waitFor } from '../support/mount.js'
import { onXDisplay } from '../support/x-display.js'
import { CLI } from '../mount/harness.js'
import { state } from '../mount/pinning.js'
import { bytes, type User, useSendingMount } from '../send-mount/helpers.js'

const MENUS = path.join(REPO, 'desktop', 'dolphin')
const INSTALLED_ACTION = '/usr/lib/transferfs/transferfs-action'
const USER: User = { email: 'dolphin@example.com', password: 'pw-dolphin-123456' }
const world = useSendingMount(USER, { TRANSFERFS_LISTING_TTL_MS: '5s' })

interface MenuAction { id: string; name: string; exec: string }

/** The actions of a service menu file, as KIO reads them. */
async function actionsOf(file: string): Promise<MenuAction[]> {
  const text = await fsp.readFile(file, 'utf8')
  const out: MenuAction[] = []
  for (const block of text.split(/^\[Desktop Action /m).slice(1)) {
    const id = block.slice(0, block.indexOf(']'))
    const field = (k: string): string => new RegExp(`^${k}=(.*)$`, 'm').exec(block)?.[1] ?? ''
    out.push({ id, name: field('Name'), exec: field('Exec') })
  }
  return out
}

/** An Exec line's argv for `paths`, as Dolphin expands it; the installed helper is the source tree's. */
function expand(exec: string, paths: string[]): string[] {
  return exec.split(' ').flatMap((word) => {
    if (word === '%F') return paths
    if (word === '%f') return [paths[0]!]
    if (word === INSTALLED_ACTION) return [path.join(MENUS, 'transferfs-action')]
    return [word]
  })
}

let byName: Map<string, MenuAction>
let seams: string
let record: string
const saved = { PATH: process.env.PATH, TRANSFERFS_COMMAND: process.env.TRANSFERFS_COMMAND }

beforeAll(async () => {
  byName = new Map([...await actionsOf(path.join(MENUS, 'transferfs.desktop')), ...await actionsOf(path.join(MENUS, 'transferfs-one.desktop'))].map((a) => [a.name, a]))
  // Programs that stand for what only a person would see: each writes its name and arguments
  // (and kdialog the text file it was to show) to the record.
  seams = await tempDir('transferfs-dolphin-seams-')
  record = path.join(seams, 'record.txt')
  const recorder = (body = ''): string => `#!/bin/sh\n{ printf '%s' "$(basename "$0")"; printf ' [%s]' "$@"; echo; } >>'${record}'\n${body}\n`
  for (const name of ['xdg-open', 'transferfs-send-dialog', 'notify-send']) await fsp.writeFile(path.join(seams, name), recorder(), { mode: 0o755 })
  await fsp.writeFile(path.join(seams, 'kdialog'), recorder(`[ "$3" = --textbox ] && cat "$4" >>'${record}'`), { mode: 0o755 })
  process.env.PATH = `${seams}:${process.env.PATH}`
  process.env.TRANSFERFS_COMMAND = `'${process.execPath}' --import '${TS_REGISTER}' '${CLI}'`
})

afterAll(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k]
    else process.env[k] = v
  }
})

async function runAction(name: string, paths: string[], display = false): Promise<{ code: number; stdout: string; stderr: string }> {
  const action = byName.get(name)
  if (!action) throw new Error(`no action named ${name}`)
  const argv = expand(action.exec, paths)
  if (!display) return run(argv[0]!, argv.slice(1), { timeoutMs: 120_000 })
  // On an X display of its own; the clipboard read back before the display goes.
  const script = '"$@" && xclip -o -selection clipboard'
  return run(...onXDisplay(['sh', '-c', script, 'sh', ...argv]), { timeoutMs: 60_000 })
}

const recorded = async (): Promise<string> => fsp.readFile(record, 'utf8').catch(() => '')

describe('Dolphin\'s service menus', () => {
  it('pass desktop-file-validate', async () => {
    const r = await run('desktop-file-validate', [path.join(MENUS, 'transferfs.desktop'), path.join(MENUS, 'transferfs-one.desktop')])
    expect(r.stdout + r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect([...byName.keys()].sort()).toEqual(['Copy link', 'Free up space', 'Keep on this computer', 'Open in browser', 'Send with transferfs…', 'Show details', 'Stop keeping'])
  })

  it('run each action on a real mount and have its effect', async () => {
    const mnt = world.account.mountDir
    const init = await world.client.transfers.initialize({ subject: 'For Dolphin', to: [USER.email] })
    const data = bytes(200_000, 5)
    await world.client.upload.uploadFile({
      transferUrl: init.transferurl, transferId: init.transferid, transferKey: init.transferkey, fileName: 'plan.bin',
      source: { size: data.length, read: async (a, b) => data.subarray(a, b) },
    })
    const id = (await world.client.transfers.complete(init.transferid, init.transferkey)).id
    let name: string | undefined
    expect(await waitFor(async () => (name = (await fsp.readdir(path.join(mnt, 'inbox'))).find((n) => n.endsWith(`(${id})`))) !== undefined, 20_000, 500)).toBe(true)
    const folder = path.join(mnt, 'inbox', name!)
    const file = path.join(folder, 'plan.bin')
    expect(await state(folder)).toBe('online')

    // Keep (%F): pinned, its files fetched.
    const keep = await runAction('Keep on this computer', [folder])
    expect(keep.code, keep.stderr).toBe(0)
    expect(await waitFor(async () => (await state(folder)) === 'pinned', 30_000, 250), await state(folder)).toBe(true)
    // Stop keeping: no longer pinned, the bytes still here.
    const stop = await runAction('Stop keeping', [folder])
    expect(stop.code, stop.stderr).toBe(0)
    expect(await state(folder)).toBe('cached')
    // Free up space: only on the service again.
    const free = await runAction('Free up space', [folder])
    expect(free.code, free.stderr).toBe(0)
    expect(await state(folder)).toBe('online')

    // Copy link (%f): the file's transfer address on the X clipboard.
    const origin = (await run('getfattr', ['--only-values', '-n', 'user.xdg.origin.url', file])).stdout
    expect(origin).toMatch(/^https:\/\/\S+$/)
    const copy = await runAction('Copy link', [file], true)
    expect(copy.code, copy.stderr).toBe(0)
    expect(copy.stdout).toBe(`${origin}\n${origin}`)

    // Open in browser, Show details, Send with transferfs…: what each was asked.
    await fsp.rm(record, { force: true })
    expect((await runAction('Open in browser', [file])).code).toBe(0)
    expect((await runAction('Show details', [folder])).code).toBe(0)
    const local = [path.join(world.src, 'a.txt'), path.join(world.src, 'b folder')]
    await fsp.writeFile(local[0]!, 'a\n')
    await fsp.mkdir(local[1]!)
    expect((await runAction('Send with transferfs…', local)).code).toBe(0)
    const lines = await recorded()
    expect(lines).toContain(`xdg-open [${origin}]\n`)
    expect(lines).toContain(`kdialog [--title] [${name}] [--textbox] [`)
    expect(lines).toMatch(/ \[--textbox\] \[\S+\.txt\] \[600\] \[420\]\n/)
    expect(lines).toContain('Subject: For Dolphin\n')
    expect(lines).toContain(`transferfs-send-dialog [${local[0]}] [${local[1]}]\n`)

    // Where an action does not apply (a service menu shows it on any file), it says why and does nothing.
    await fsp.rm(record, { force: true })
    const elsewhere = await runAction('Keep on this computer', [local[0]!])
    expect(elsewhere.code).toBe(1)
    expect(await recorded()).toMatch(/^notify-send \[--app-name=transferfs\] \[transferfs\] \[Keep on this computer: not done for a\.txt, it is not on a transferfs mount\]$/m)
  }, 150_000)
})
