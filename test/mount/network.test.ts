// A real mount on a company network. Through a real proxy (Debian's tinyproxy, Basic
// authentication) with nothing but HTTPS_PROXY set: login, the mount, a verified read of the
// demo's 1 GiB file, thumbnails and a send all work, and the connections to the service are
// the proxy's, the mount's own going to the proxy; a wrong password makes listings fail at
// once with the proxy's word in the log; NO_PROXY naming the service goes straight to it.
// Then the service's CA trusted through the system's store alone (SSL_CERT_FILE, no --ca),
// and with an unrelated --ca beside it; an SSL_CERT_FILE naming a file that is not there only
// warns. NODE_EXTRA_CA_CERTS is unset: users do not have it.
import { readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TransferClient } from '../../src/api/client.js'
import type { Transfer } from '../../src/api/types.js'
import { createSelfSignedCertificate } from '../../src/emulator/cert.js'
import { startProxy, type RunningProxy } from '../../scripts/tinyproxy.js'
import { isMounted, run, tempDir, unmountAll, waitFor, waitForExit } from '../support/mount.js'
import { startTestService, type TestService } from '../support/service.js'
import { md5, outboxDrained, sentRecords } from '../send-mount/helpers.js'
import { cli, inboxDetails, login, mount, serviceClient, transferFolder, useAccount, type Account } from './harness.js'

const USER = 'ann'
const PASSWORD = 'pw-of-ann.42'
const GiB = 1024 ** 3

let service: TestService
let client: TransferClient
let proxy: RunningProxy
let transfers: Transfer[]
let account: Account
let apiHost: string
let fileHost: string

/** The variables the tests set, unset between them. */
const NETWORK_VARIABLES = ['HTTPS_PROXY', 'NO_PROXY', 'SSL_CERT_FILE']

beforeAll(async () => {
  service = await startTestService({ demo: true })
  client = await serviceClient(service)
  transfers = await inboxDetails(client)
  proxy = await startProxy({ user: USER, password: PASSWORD })
  apiHost = new URL(service.baseUrl).host
  fileHost = new URL(service.uploadUrl).host
  account = await useAccount(service, { TRANSFERFS_SETTLE_MS: '400' })
  delete process.env.NODE_EXTRA_CA_CERTS
})
afterAll(async () => {
  await unmountAll()
  await proxy?.stop()
  await client?.close()
  await service?.close()
})

/** The demo transfer whose subject starts so, and the path of its file named `name` (its largest when not given) on the mount. */
async function fileOnMount(subject: string, name?: string): Promise<{ file: string; md5: string; size: number }> {
  const t = transfers.find((x) => x.subject.startsWith(subject))!
  const f = name ? t.files.find((x) => x.filename === name)! : [...t.files].sort((a, b) => (b.filesize ?? 0) - (a.filesize ?? 0))[0]!
  return { file: path.join(await transferFolder(account.mountDir, t.id), f.filename!), md5: f.md5!, size: f.filesize! }
}

async function md5sum(file: string): Promise<string> {
  const r = await run('md5sum', [file], { timeoutMs: 300_000 })
  expect(r.code, r.stderr).toBe(0)
  return r.stdout.split(' ')[0]!
}

/**
 * The established TCP connections to port whose holders ss named, each with their pids. A
 * process forked by one that holds a socket holds it too until it execs (a command the test
 * starts while ss looks): so a connection is judged by whether its holders include a process,
 * not by every pid ss names. ss reads who holds what before it lists the connections, so one
 * opened in between comes with no holder: it is left out, and judged when it is seen again.
 */
async function connectionsTo(port: number): Promise<{ line: string; pids: number[] }[]> {
  const r = await run('ss', ['-Htnp', 'state', 'established', `( dport = :${port} )`])
  expect(r.code, r.stderr).toBe(0)
  return r.stdout.split('\n').filter((l) => l.trim())
    .map((line) => ({ line: line.trim(), pids: [...line.matchAll(/pid=(\d+)/g)].map((m) => Number(m[1])) }))
    .filter((c) => c.pids.length > 0)
}

/**
 * `ls inbox/` until the mount answers "Host is down" (it has found the service unreachable,
 * none of the failures waited out), and the mount's log since it started.
 */
async function listUntilUnreachable(): Promise<string> {
  let last = { code: 0, stderr: '' }
  for (let i = 0; i < 5 && !/Host is down/.test(last.stderr); i++) {
    last = await run('ls', [path.join(account.mountDir, 'inbox')])
    expect(last.code).not.toBe(0)
  }
  expect(last.stderr).toContain('Host is down')
  return (await readFile(daemonLog(), 'utf8')).slice(logMark)
}

const daemonLog = () => path.join(account.home, 'daemon.log')
/** Where the daemon's log stood when the last mount started. */
let logMark = 0
/** The mount's process. */
let daemon = 0

/** Mounts afresh with these variables set (and the others of NETWORK_VARIABLES unset); the proxy's log starts afresh. */
async function remount(env: Record<string, string>): Promise<void> {
  if (await isMounted(account.mountDir)) {
    const r = await cli(['unmount', account.mountDir])
    expect(r.code, r.stderr).toBe(0)
  }
  // Gone for good, so that nothing it still tries reaches the proxy's log.
  if (daemon) expect(await waitForExit(daemon)).toBe(true)
  await proxy.clearLog()
  logMark = (await readFile(daemonLog(), 'utf8')).length
  for (const v of NETWORK_VARIABLES) delete process.env[v]
  Object.assign(process.env, env)
  daemon = await mount(account)
}

describe('through a proxy', () => {
  it('with only HTTPS_PROXY set: login, a mount, a verified read of 1 GiB, thumbnails and a send all go through it', async () => {
    process.env.HTTPS_PROXY = proxy.url(`${USER}:${PASSWORD}`)
    await proxy.clearLog()
    await login(service)
    expect(await proxy.connects()).toContain(apiHost)
    await service.controls.resetCounters()
    await proxy.clearLog()
    const pid = (daemon = await mount(account))

    // Who holds the connections to the service's ports and to the proxy, seen while the mount works.
    const ports = { api: Number(new URL(service.baseUrl).port), files: Number(new URL(service.uploadUrl).port), proxy: proxy.port }
    const seen = { api: new Map<string, number[]>(), files: new Map<string, number[]>(), proxy: new Map<string, number[]>() }
    const look = async () => {
      for (const k of ['api', 'files', 'proxy'] as const) for (const c of await connectionsTo(ports[k])) seen[k].set(c.line, c.pids)
    }
    const big = await fileOnMount('Disk image')
    expect(big.size).toBe(GiB)
    let reading = true
    const looking = (async () => {
      while (reading) {
        await look()
        await new Promise((r) => setTimeout(r, 200))
      }
    })()
    try {
      expect(await md5sum(big.file)).toBe(big.md5)
    } finally {
      reading = false
      await looking
    }

    // Listing the photos makes the mount fetch their thumbnails from the file server.
    const photos = path.dirname((await fileOnMount('Photos from the harbour walk')).file)
    expect((await readdir(photos)).length).toBeGreaterThan(0)
    expect(await waitFor(async () => ((await service.controls.counters()).routes.preview ?? 0) > 0, 30_000)).toBe(true)

    const sent = Buffer.from('sent through the proxy\n'.repeat(1000))
    const src = path.join(await tempDir(), 'through-proxy.txt')
    await writeFile(src, sent)
    expect((await run('cp', [src, path.join(account.mountDir, 'outbox/')])).code).toBe(0)
    expect(await outboxDrained(account)).toBe(true)
    const record = (await sentRecords(account)).find((r) => r.subject === 'through-proxy.txt')!
    const details = await client.transfers.details(record.transferid)
    expect(details.files.map((f) => [f.filename, f.md5])).toEqual([['through-proxy.txt', md5(sent)]])

    const connects = await proxy.connects()
    expect(connects).toContain(apiHost)
    expect(connects).toContain(fileHost)
    expect(connects.filter((c) => c !== apiHost && c !== fileHost)).toEqual([])
    // A search is an API call: a connection to the API's port, looked at while it is kept.
    await run('ls', [path.join(account.mountDir, 'search', 'words nothing holds')])
    await look()
    // The connections to both origins (range streams, the pools, those opened ahead) were
    // the proxy's, never the mount's; the mount's own went to the proxy.
    for (const k of ['api', 'files'] as const) {
      const connections = [...seen[k]]
      expect(connections.length, `connections to the ${k} port`).toBeGreaterThan(0)
      expect(connections.filter(([, pids]) => pids.includes(pid)).map(([line]) => line), `the mount's own connections to the ${k} port`).toEqual([])
      const others = connections.filter(([, pids]) => !pids.includes(proxy.pid) && !pids.includes(process.pid))
      expect(others.map(([line]) => line), `connections to the ${k} port held by neither the proxy (${proxy.pid}) nor this test (${process.pid})`).toEqual([])
    }
    expect([...seen.proxy.values()].some((pids) => pids.includes(pid)), 'the mount connected to the proxy').toBe(true)
  })

  it('a wrong password: listings answer "Host is down" at once, and the mount\'s log has the proxy\'s word', async () => {
    await remount({ HTTPS_PROXY: proxy.url(`${USER}:not-${PASSWORD}`) })
    const log = await listUntilUnreachable()
    expect(log).toContain(`the service cannot be reached: the proxy http://127.0.0.1:${proxy.port} (HTTPS_PROXY) wants credentials: it refused the user name and password of its URL (HTTP 40`)
    expect(log).not.toContain(PASSWORD)
  })

  it('NO_PROXY naming the service: the mount goes straight to it, the proxy sees nothing', async () => {
    await remount({ HTTPS_PROXY: proxy.url(`${USER}:${PASSWORD}`), NO_PROXY: '127.0.0.1' })
    const report = await fileOnMount('Quarterly report')
    expect(await md5sum(report.file)).toBe(report.md5)
    expect(await proxy.log()).toEqual([])
  })
})

describe('the authorities trusted', () => {
  it('the service\'s CA in a bundle SSL_CERT_FILE names, no --ca: login and a verified read', async () => {
    const bundle = path.join(await tempDir(), 'system-bundle.pem')
    await writeFile(bundle, service.caPem)
    delete process.env.TRANSFERFS_CA
    process.env.SSL_CERT_FILE = bundle
    await login(service)
    await remount({ SSL_CERT_FILE: bundle })
    const db = await fileOnMount('Database export')
    expect(await md5sum(db.file)).toBe(db.md5)
  })

  it('an unrelated --ca beside that store: the service is still trusted; that --ca alone is not enough, and says so', async () => {
    const dir = await tempDir()
    const unrelated = path.join(dir, 'unrelated-ca.pem')
    await writeFile(unrelated, (await createSelfSignedCertificate(new Date(), 86_400_000, 'CN=an unrelated authority')).certPem)
    const bundle = path.join(dir, 'system-bundle.pem')
    await writeFile(bundle, service.caPem)
    await remount({ SSL_CERT_FILE: bundle, TRANSFERFS_CA: unrelated })
    const report = await fileOnMount('Quarterly report')
    expect(await md5sum(report.file)).toBe(report.md5)

    const empty = path.join(dir, 'empty-bundle.pem')
    await writeFile(empty, '')
    await remount({ SSL_CERT_FILE: empty, TRANSFERFS_CA: unrelated })
    expect(await listUntilUnreachable()).toContain(`the service cannot be reached: the certificate of ${apiHost} is not accepted`)
  })

  it('SSL_CERT_FILE naming a file that is not there, the service\'s CA given with ca: the mount works, its log warning once, naming the variable and the file', async () => {
    // As in a clean Debian root whose environment names the bundle package ca-certificates would install.
    const missing = path.join(await tempDir(), 'ca-certificates.crt')
    await remount({ SSL_CERT_FILE: missing, TRANSFERFS_CA: service.ca })
    const report = await fileOnMount('Quarterly report')
    expect(await md5sum(report.file)).toBe(report.md5)
    const log = (await readFile(daemonLog(), 'utf8')).slice(logMark)
    expect(log.split('\n').filter((l) => l.includes('SSL_CERT_FILE'))).toEqual([
      `transferfs: warn: SSL_CERT_FILE names ${missing}, which is not there: its certificates are left out; Node's own authorities and the ca setting's are still trusted`,
    ])
  })
})
