// allowOther without giving away what is the owner's alone. The owner (root here) mounts with
// allowOther; another local user (the suite's normal user) must not reach: an unlocked
// password-protected transfer (its files, or a token in its `.transfer.json` to fetch them
// with outside the mount), what the owner sent from a private outbox file, `.status` (it
// names every send), nor the account's session through search/ and by-id/.
import { readFile, readdir, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TransferClient } from '../../src/api/client.js'
import type { Transfer } from '../../src/api/types.js'
import { DEMO_PASSWORD } from '../../src/emulator/demo-content.js'
import { run, unmountAll, waitFor } from '../support/mount.js'
import { ensureNormalUser, normalUserSkipReason, runAs, type NormalUser } from '../../scripts/support/normal-user.js'
import { startTestService, type TestService } from '../support/service.js'
import { login, mount, serviceClient, transferFolder, useAccount, type Account } from './harness.js'

const skip = normalUserSkipReason()
let service: TestService
let client: TransferClient
let account: Account
let other: NormalUser
let locked: Transfer
let report: Transfer

const asOther = (script: string, ...args: string[]) => runAs(other, 'sh', ['-c', script, 'sh', ...args], { timeoutMs: 60_000 })

beforeAll(async () => {
  if (skip) return
  other = await ensureNormalUser()
  service = await startTestService({ demo: true })
  client = await serviceClient(service)
  account = await useAccount(service, { TRANSFERFS_ALLOW_OTHER: 'true', TRANSFERFS_SETTLE_MS: '400' })
  await run('chmod', ['0755', account.home]) // the other user must reach the mount point
  await login(service)
  await mount(account)
  const inbox: Transfer[] = []
  for await (const t of client.transfers.inboxAll()) inbox.push(t)
  locked = inbox.find((t) => t.passwordprotected)!
  report = inbox.find((t) => t.subject?.includes('Quarterly report'))!
}, 180_000)

afterAll(async () => {
  await unmountAll()
  await client?.close()
  await service?.close()
})

describe.skipIf(skip !== null)('another user on a mount with allowOther, after the owner', () => {
  it('unlocked a protected transfer: cannot read its files, and its .transfer.json gives no token to fetch them with', async () => {
    const dir = await transferFolder(account.mountDir, locked.id)
    await writeFile(path.join(dir, '.password'), `${DEMO_PASSWORD}\n`)
    const names = (await readdir(dir)).filter((n) => !n.startsWith('.'))
    expect(names.length).toBeGreaterThan(0)
    const file = path.join(dir, names[0]!)
    const json = await readFile(path.join(dir, '.transfer.json'), 'utf8')
    expect(json).not.toMatch(/[?&](token|trackid)=/)
    expect((await run('getfattr', ['--only-values', '-n', 'user.xdg.origin.url', file])).stdout).not.toContain('?')
    expect((await stat(dir)).mode & 0o077).toBe(0)
    expect((await stat(file)).mode & 0o7777).toBe(0o400)
    // The file's address, as .transfer.json shows it to whoever may read it, fetched outside the mount.
    const { downloadurl } = (JSON.parse(json) as Transfer).files[0]!
    const fetched = await asOther('curl -ksS --fail -o /dev/null "$1"', downloadurl)
    expect(fetched.code, `curl ${downloadurl}: ${fetched.stderr}`).not.toBe(0)
    for (const target of [file, path.join(dir, '.transfer.json')]) {
      const read = await asOther('cat "$1"', target)
      expect(read.code, target).not.toBe(0)
      expect(read.stderr).toMatch(/Permission denied/)
    }
  })

  it('sent a private outbox file: cannot read it in sent/; a file open to all stays readable; .status shows them nothing', async () => {
    const outbox = path.join(account.mountDir, 'outbox')
    const made = await run('sh', ['-c', '(umask 077 && echo "the owner\'s secret" > "$1/private-note.txt") && echo "for all" > "$1/open-note.txt" && chmod 0644 "$1/open-note.txt"', 'sh', outbox])
    expect(made.code, made.stderr).toBe(0)
    const sentFolder = async (name: string): Promise<string | null> => {
      const found = (await readdir(path.join(account.mountDir, 'sent')).catch(() => [] as string[])).find((n) => n.includes(name))
      return found ? path.join(account.mountDir, 'sent', found) : null
    }
    expect(await waitFor(async () => (await sentFolder('private-note')) !== null && (await sentFolder('open-note')) !== null, 60_000, 250)).toBe(true)
    const privateFile = path.join((await sentFolder('private-note'))!, 'private-note.txt')
    const openFile = path.join((await sentFolder('open-note'))!, 'open-note.txt')
    expect(await readFile(privateFile, 'utf8')).toBe('the owner\'s secret\n')
    expect([(await stat(privateFile)).mode & 0o7777, (await stat(openFile)).mode & 0o7777]).toEqual([0o400, 0o444])
    const secret = await asOther('cat "$1"', privateFile)
    expect(secret.stdout).not.toContain('secret')
    expect(secret.stderr).toMatch(/Permission denied/)
    const open = await asOther('cat "$1"', openFile)
    expect(open.code, open.stderr).toBe(0)
    expect(open.stdout).toBe('for all\n')
    // The owner's .status names the private send; the other user reads none of it.
    const status = path.join(account.mountDir, '.status')
    expect(await readFile(status, 'utf8')).toContain('private-note')
    const theirs = await asOther('cat "$1"', status)
    expect(theirs.stdout).not.toContain('private-note')
    expect(theirs.stderr).toMatch(/Permission denied/)
  })

  it('searched: can list the searches made, but start none and look up nothing by id (no call reaches the service)', async () => {
    const search = path.join(account.mountDir, 'search')
    expect((await readdir(path.join(search, 'Quarterly'))).length).toBeGreaterThan(0)
    await service.controls.resetCounters()
    const attempts: Array<[string, string]> = [
      ['a new search', `ls "${search}/harbour"`],
      ['a search made with mkdir', `mkdir "${search}/contracts"`],
      ['a transfer by id', `ls "${account.mountDir}/by-id/${report.id}"`],
      ['the protected transfer by id', `cat "${account.mountDir}/by-id/${locked.id}/.transfer.json"`],
    ]
    for (const [what, script] of attempts) {
      const r = await asOther(script)
      expect(r.code, `${what}: ${r.stdout}`).not.toBe(0)
      expect(r.stderr, what).toMatch(/Permission denied|No such file/)
    }
    const routes = (await service.controls.counters()).routes
    expect([routes.inbox ?? 0, routes.details ?? 0], 'inbox searches and details asked').toEqual([0, 0])
    // What exists is still listed to them.
    const listed = await asOther('ls "$1"', search)
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout.split('\n')).toContain('Quarterly')
    expect(await readdir(search)).toEqual(['Quarterly'])
  })
})
