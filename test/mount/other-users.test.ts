// allowOther without handing over the account. The owner (root here) mounts with allowOther;
// another local user (the suite's normal user, in child processes of its own uid) may read
// what the mount shows as readable, and every write of theirs is refused by the kernel: into
// outbox/, .password, .forward, a sent folder, the owner's private outbox entry. Nothing of it
// reaches the disk or the service.
import { chmod, readdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TransferClient } from '../../src/api/client.js'
import type { Transfer } from '../../src/api/types.js'
import { DEMO_PASSWORD } from '../../src/emulator/demo-content.js'
import { run, tempDir, unmountAll } from '../support/mount.js'
import { ensureNormalUser, normalUserSkipReason, runAs, type NormalUser } from '../../scripts/support/normal-user.js'
import { startTestService, type TestService } from '../support/service.js'
import { cli, login, mount, serviceClient, transferFolder, useAccount, type Account } from './harness.js'

const skip = normalUserSkipReason()
let service: TestService
let client: TransferClient
let account: Account
let other: NormalUser
let sentFolder = ''
let locked: Transfer
let report: Transfer

/** What the service did that only a write could have caused. */
const WRITE_ROUTES = ['initialize', 'savefile', 'complete', 'forward'] as const

beforeAll(async () => {
  if (skip) return
  other = await ensureNormalUser()
  service = await startTestService({ demo: true })
  client = await serviceClient(service)
  // Entries stay in outbox/ while looked at, and are not uploaded early (the owner's own
  // uploads would blur what the other user caused); the sent transfer comes from `transferfs send`.
  account = await useAccount(service, { TRANSFERFS_ALLOW_OTHER: 'true', TRANSFERFS_SETTLE_MS: '10m', TRANSFERFS_UPLOAD_WHILE_COPYING: 'false' })
  await chmod(account.home, 0o755) // the other user must reach the mount point
  await login(service)
  // Sent from a folder others may read: sent/ shows it to whom could read it here.
  const srcDir = await tempDir()
  await chmod(srcDir, 0o755)
  const src = path.join(srcDir, 'owner.txt')
  await writeFile(src, 'the owner sent this\n')
  const sent = await cli(['send', src, '--to', 'bob@example.org', '--subject', 'Owner sent', '--json'])
  if (sent.code !== 0) throw new Error(`transferfs send: ${sent.stderr}`)
  await mount(account)
  const inbox: Transfer[] = []
  for await (const t of client.transfers.inboxAll()) inbox.push(t)
  locked = inbox.find((t) => t.passwordprotected)!
  report = inbox.find((t) => t.subject?.includes('Quarterly report'))!
  const sentNames = await readdir(path.join(account.mountDir, 'sent'))
  sentFolder = path.join(account.mountDir, 'sent', sentNames.find((n) => n.includes('Owner sent'))!)
  // The owner's private entry: a 0600 file in a 0700 folder.
  const made = await run('bash', ['-c', 'mkdir -m 0700 "$1" && (umask 077 && echo secret > "$1/s.txt")', 'bash', path.join(account.mountDir, 'outbox', 'private')])
  if (made.code !== 0) throw new Error(`private entry: ${made.stderr}`)
}, 180_000)

afterAll(async () => {
  await unmountAll()
  await client?.close()
  await service?.close()
})

describe.skipIf(skip !== null)('another user on a mount with allowOther', () => {
  it('can write nothing: outbox/, .password, .forward, a sent folder, the owner\'s private entry; nothing reaches the disk or the service', async () => {
    const outbox = path.join(account.mountDir, 'outbox')
    const lockedDir = await transferFolder(account.mountDir, locked.id)
    const lockedBefore = (await readdir(lockedDir)).sort()
    await service.controls.resetCounters()
    const attempts: Array<[string, string]> = [
      ['write into outbox/', `echo x > '${outbox}/evil.txt'`],
      ['make a folder in outbox/', `mkdir '${outbox}/evil'`],
      ['unlock a protected transfer', `echo ${DEMO_PASSWORD} > '${lockedDir}/.password'`],
      ['forward a sent transfer', `echo mallory@example.org > '${sentFolder}/.forward'`],
      ['add a file to a sent transfer', `cp /etc/hostname '${sentFolder}/'`],
      ['read the owner\'s private entry', `cat '${outbox}/private/s.txt'`],
      ['delete the owner\'s private entry', `rm -f '${outbox}/private/s.txt'`],
      ['change the owner\'s entry\'s mode', `chmod 0666 '${outbox}/private'`],
    ]
    for (const [what, script] of attempts) {
      const r = await runAs(other, 'sh', ['-c', script], { timeoutMs: 30_000 })
      expect(r.code, `${what}: ${r.stdout}${r.stderr}`).not.toBe(0)
      expect(r.stderr, what).toMatch(/Permission denied|Operation not permitted/)
    }
    // Nothing on disk: the owner sees the outbox as it was, the private file whole.
    expect((await readdir(outbox)).sort()).toEqual(['private'])
    expect((await run('cat', [path.join(outbox, 'private', 's.txt')])).stdout).toBe('secret\n')
    expect((await readdir(sentFolder)).sort()).not.toContain('hostname')
    // Nothing at the service: no transfer begun, no upload, no forward, and the protected transfer still locked.
    const routes = (await service.controls.counters()).routes
    expect(WRITE_ROUTES.map((r) => routes[r] ?? 0)).toEqual(WRITE_ROUTES.map(() => 0))
    expect((await service.controls.mail()).filter((m) => m.to === 'mallory@example.org')).toEqual([])
    expect((await readdir(lockedDir)).sort()).toEqual(lockedBefore)
  })

  it('can read what the mount shows as readable: a received file, .transfer.json, a sent file', async () => {
    const dir = await transferFolder(account.mountDir, report.id)
    const r = await runAs(other, 'sh', ['-c', `cat '${dir}/report.txt' '${dir}/.transfer.json' '${sentFolder}/owner.txt' >/dev/null && ls '${account.mountDir}/inbox' >/dev/null`], { timeoutMs: 60_000 })
    expect(r.code, r.stderr).toBe(0)
    const mine = await runAs(other, 'md5sum', [path.join(dir, 'report.txt')], { timeoutMs: 60_000 })
    const owners = await run('md5sum', [path.join(dir, 'report.txt')])
    expect(mine.stdout.split(' ')[0]).toBe(owners.stdout.split(' ')[0])
    // .status names every send, private ones too: the owner's alone (other-users-private.test.ts).
    const theirStatus = await runAs(other, 'cat', [path.join(account.mountDir, '.status')], { timeoutMs: 30_000 })
    expect(theirStatus.stderr).toMatch(/Permission denied/)
  })
})
