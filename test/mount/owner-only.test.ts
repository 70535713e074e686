// What transferfs leaves on disk is the owner's alone, and no secret reaches a log or an
// output. As a new user with umask 022 would: folders an older version left open, a mount,
// reads (the disk cache fills), an unlock of a protected transfer, a send through the
// outbox and one with `transferfs send --json`, all under injected faults and a session
// that expires on the way. Then nothing under the three folders is open to group or
// others, and the mount's debug log holds no key, password, token or file byte.
import { lstat, mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TransferClient } from '../../src/api/client.js'
import type { Transfer } from '../../src/api/types.js'
import { DEMO_PASSWORD } from '../../src/emulator/demo-content.js'
import { run, unmountAll } from '../support/mount.js'
import { startTestService, type TestService } from '../support/service.js'
import { outboxDrained, SETTLE } from '../send-mount/helpers.js'
import { cli, filesBelow, login, md5OfFile, mount, serviceClient, transferFolder, useAccount, type Account } from './harness.js'

const DAY = 86_400_000
let service: TestService
let client: TransferClient
let account: Account
let savedUmask = 0
let protectedTransfer: Transfer
const outputs: string[] = []

/** Every entry below dir (itself included), with its mode. */
async function entriesBelow(dir: string): Promise<Array<{ path: string; mode: number; kind: string }>> {
  const out: Array<{ path: string; mode: number; kind: string }> = []
  const walk = async (p: string): Promise<void> => {
    // A temporary file renamed into place between readdir and lstat is gone: nothing to judge.
    const st = await lstat(p).catch((e: NodeJS.ErrnoException) => { if (e.code === 'ENOENT') return null; throw e })
    if (!st) return
    out.push({ path: p, mode: st.mode & 0o777, kind: st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'link' : 'file' })
    if (st.isDirectory()) for (const name of await readdir(p).catch(() => [] as string[])) await walk(path.join(p, name))
  }
  await walk(dir)
  return out
}

beforeAll(async () => {
  savedUmask = process.umask(0o022)
  service = await startTestService({ demo: true })
  client = await serviceClient(service)
  account = await useAccount(service, { TRANSFERFS_SETTLE_MS: SETTLE, TRANSFERFS_LOG_LEVEL: 'debug' })
  // What an older version left: open folders and files.
  await mkdir(path.join(account.home, 'cache', 'chunks', 'old'), { recursive: true, mode: 0o755 })
  await writeFile(path.join(account.home, 'cache', 'chunks', 'old', 'left.bin'), 'old bytes', { mode: 0o644 })
  await mkdir(path.join(account.home, 'data'), { recursive: true, mode: 0o755 })
  await writeFile(path.join(account.home, 'data', 'mount.log'), 'an old log\n', { mode: 0o644 })
  await login(service)
  await mount(account)
  const inbox: Transfer[] = []
  for await (const t of client.transfers.inboxAll()) inbox.push(t)
  protectedTransfer = inbox.find((t) => t.passwordprotected)!
}, 180_000)

afterAll(async () => {
  await unmountAll()
  await client?.close()
  await service?.close()
  process.umask(savedUmask)
})

describe('owner-only files and no secrets, with umask 022', () => {
  it('reads, an unlock and sends under faults and a session renewal leave nothing open and nothing secret', async () => {
    const inbox = await readdir(path.join(account.mountDir, 'inbox'))
    expect(inbox.length).toBeGreaterThan(3)
    // Faults on every kind of call, and a login token that expires on the way.
    await service.controls.fault({ route: 'download', kind: 'status', status: 503, count: 3 })
    await service.controls.fault({ route: 'download', kind: 'reset', count: 2 })
    await service.controls.fault({ route: 'download', kind: 'corrupt', count: 2 })
    await service.controls.fault({ route: 'rangehash', kind: 'status', status: 500, count: 2 })
    await service.controls.fault({ route: 'details', kind: 'status', status: 503, count: 2 })
    await service.controls.fault({ route: 'initialize', kind: 'status', status: 429, count: 1 })
    await service.controls.advanceClock(8 * DAY)
    try {
      // Reads: the demo's Quarterly report and Database export, byte for byte.
      for (const id of [inbox.find((n) => n.includes('Quarterly'))!, inbox.find((n) => n.includes('Database'))!]) {
        for (const f of await filesBelow(path.join(account.mountDir, 'inbox', id))) {
          expect(await md5OfFile(f.abs)).toMatch(/^[0-9a-f]{32}$/)
        }
      }
      // An unlock, and a read of the unlocked files.
      const locked = await transferFolder(account.mountDir, protectedTransfer.id)
      const unlock = await run('bash', ['-c', `echo ${DEMO_PASSWORD} > "$1"`, 'bash', path.join(locked, '.password')])
      expect(unlock.code, unlock.stderr).toBe(0)
      for (const f of await filesBelow(locked)) await md5OfFile(f.abs)
      // A send through the outbox, and one from the command line with --json.
      const src = path.join(account.home, 'to-send.txt')
      await writeFile(src, 'bytes to send\n')
      expect((await run('cp', [src, path.join(account.mountDir, 'outbox', 'note.txt')])).code).toBe(0)
      expect(await outboxDrained(account)).toBe(true)
      const sent = await cli(['send', src, '--to', 'ann@example.com', '--json'])
      expect(sent.code, sent.stderr).toBe(0)
      outputs.push(sent.stdout, sent.stderr)
      const status = await cli(['status', '--json'])
      outputs.push(status.stdout, status.stderr)
    } finally {
      await service.controls.clearFaults()
    }

    // Nothing under the three folders is open to group or others.
    const open: string[] = []
    for (const dir of ['config', 'cache', 'data']) {
      for (const e of await entriesBelow(path.join(account.home, dir))) {
        if (e.kind !== 'link' && (e.mode & 0o077) !== 0) open.push(`${e.path} ${e.mode.toString(8)}`)
      }
    }
    expect(open).toEqual([])
    // The disk cache really holds blocks, and the session was renewed (a new token was written).
    expect((await entriesBelow(path.join(account.home, 'cache'))).filter((e) => e.path.endsWith('.seg')).length).toBeGreaterThan(0)

    // No secret in the mount's log (debug level) or in what the commands printed.
    const tokens = JSON.parse(await readFile(path.join(account.home, 'config', 'tokens.json'), 'utf8')) as { logintoken: string; refreshtoken: string }
    const details = await client.transfers.details(protectedTransfer.id, { filesLimit: -1, password: DEMO_PASSWORD })
    const urlSecrets = details.files.flatMap((f) => [...new URL(f.downloadurl).searchParams.values()])
    expect(urlSecrets.length).toBeGreaterThan(0)
    const secrets = [service.apiKey, service.user.password, tokens.logintoken, tokens.refreshtoken, DEMO_PASSWORD, ...urlSecrets]
    const log = await readFile(path.join(account.home, 'daemon.log'), 'utf8')
    expect(log).toMatch(/retrying|recovered|debug/)
    for (const text of [log, ...outputs]) {
      for (const secret of secrets) expect(text.includes(secret), `a secret (${secret.length} chars) appears in the output`).toBe(false)
    }
    // No file byte either: the demo report's text never reaches the log.
    const report = inbox.find((n) => n.includes('Quarterly'))!
    const text = await readFile(path.join(account.mountDir, 'inbox', report, 'report.txt'), 'utf8')
    expect(log.includes(text.slice(0, 40))).toBe(false)
  })
})
