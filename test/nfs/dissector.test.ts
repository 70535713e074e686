// Wireshark's dissector, which none of us wrote, reads every call and reply of a libnfs session
// with `transferfs serve-nfs` (list, read, copy into outbox/) captured on the loopback: no
// packet is malformed and no warning or error is about RPC, MOUNT or NFS (TCP's own, a reset
// with which libnfs's tools end their connections, a receive window filled by a read, are the
// client's and the kernel's).
import { spawn } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { login, useAccount, useOneFile, type Account } from '../mount/harness.js'
import { run } from '../support/mount.js'
import { libnfs, listedNames, nfsUrl, serveNfs, type NfsServe } from './harness.js'

const world = useOneFile('take.wav', 300_000, 5, 'Dissected')
let account: Account
let server: NfsServe

beforeAll(async () => {
  account = await useAccount(world.service)
  await login(world.service)
  server = await serveNfs([path.join(account.home, 'mnt')])
}, 120_000)

afterAll(async () => {
  await server?.stop()
})

/** tshark's reading of `capture` with the server's port decoded as ONC RPC. */
async function readCapture(capture: string, ...args: string[]): Promise<string[]> {
  const r = await run('tshark', ['-r', capture, '-d', `tcp.port==${server.port},rpc`, ...args], { timeoutMs: 60_000 })
  expect(r.code, r.stderr).toBe(0)
  return r.stdout.split('\n').filter(Boolean)
}

/** One line per frame through `filter`, with `field`. */
const decoded = (capture: string, filter: string, field: string): Promise<string[]> => readCapture(capture, '-Y', filter, '-T', 'fields', '-e', field)

it('finds no malformed packet and no warning in a whole libnfs session', async () => {
  const capture = path.join(account.home, 'session.pcapng')
  const tshark = spawn('tshark', ['-i', 'lo', '-f', `tcp port ${server.port}`, '-w', capture], { stdio: ['ignore', 'ignore', 'pipe'] })
  const ended = new Promise<void>((resolve) => tshark.once('exit', () => resolve()))
  try {
    // tshark says so on stderr once it captures.
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('tshark did not start capturing within 30 s')), 30_000)
      let said = ''
      tshark.stderr.on('data', (d: Buffer) => {
        said += d.toString()
        if (said.includes('Capturing on')) {
          clearTimeout(timer)
          resolve()
        }
      })
    })
    // "Capturing on" can come a moment before the first packets are: give it that moment.
    await new Promise((r) => setTimeout(r, 1000))
    const inbox = await libnfs('nfs-ls', nfsUrl(server.port, '/inbox'))
    const folder = listedNames(inbox.stdout).find((n) => n.endsWith(`(${world.transferId})`))
    expect(folder, inbox.stdout).toBeDefined()
    expect((await libnfs('nfs-cat', nfsUrl(server.port, `/inbox/${folder}/take.wav`), { encoding: 'latin1' })).code).toBe(0)
    const src = path.join(account.home, 'notes.txt')
    await writeFile(src, 'for the mix\n')
    expect((await run('nfs-cp', [src, nfsUrl(server.port, '/outbox/notes.txt')])).code).toBe(0)
    // The last packets reach the capture file before tshark ends.
    await new Promise((r) => setTimeout(r, 1000))
  } finally {
    tshark.kill('SIGINT')
    const timer = setTimeout(() => tshark.kill('SIGKILL'), 10_000)
    await ended
    clearTimeout(timer)
  }
  // Not vacuous: the dissector read MOUNT and the NFS procedures of the session.
  const procedures = new Set(await decoded(capture, 'nfs', 'nfs.procedure_v3'))
  for (const proc of ['1', '3', '6', '7', '8', '17', '19']) expect(procedures).toContain(proc) // GETATTR LOOKUP READ WRITE CREATE READDIRPLUS FSINFO
  expect((await decoded(capture, 'mount', 'frame.number')).length).toBeGreaterThan(0)
  expect(await decoded(capture, '_ws.malformed', 'frame.number')).toEqual([])
  // The expert's table of warnings and errors: "<count> <group> <protocol> <summary>" rows.
  const expert = await readCapture(capture, '-q', '-z', 'expert,warn')
  const rows = expert.map((l) => /^\s+\d+\s+\S+\s+(\S+)\s+(.*)$/.exec(l)).filter((m) => m !== null)
  expect(rows.length).toBeGreaterThan(0) // the resets at least: the table is read
  expect(rows.filter((m) => m[1] !== 'TCP').map((m) => `${m[1]}: ${m[2]}`)).toEqual([])
})
