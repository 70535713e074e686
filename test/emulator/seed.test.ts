// `demo: true` seeds the main account's inbox from demo-content.ts, with every file streamed to disk;
// a given data dir keeps the certificate and the bytes and is not removed by close().
import { existsSync } from 'node:fs'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { DEMO_PASSWORD, demoTransfers } from '../../src/emulator/demo-content.js'
import { startTestService, type TestService } from '../support/service.js'
import { api, get, login } from './http.js'

let svc: TestService
let dataDir: string
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'seed-test-'))
  svc = await startTestService({ demo: true, dataDir })
}, 300_000)
afterAll(async () => {
  await svc.close()
  expect(existsSync(join(dataDir, 'ca.pem'))).toBe(true)
  await rm(dataDir, { recursive: true, force: true })
})

it('puts every demo transfer in the inbox with the right names and sizes, expired ones only with includeExpired', async () => {
  const token = (await login(svc)).logintoken
  const demo = demoTransfers()
  const all = (await api(svc, 'GET', '/transfer/inbox', { logintoken: token, query: { includeExpired: true } })).body.data.transfers as
    Array<{ id: string; subject: string; from: string; passwordprotected: boolean; numberoffiles: number; files: Array<{ filename: string; filesize: number }>; isexpired: boolean }>
  expect(all).toHaveLength(demo.length)
  const live = (await api(svc, 'GET', '/transfer/inbox', { logintoken: token })).body.data.transfers
  expect(live).toHaveLength(demo.filter((d) => !d.expired).length)
  for (const d of demo) {
    const t = all.find((x) => x.subject === d.subject)!
    expect(t.from).toBe(d.from)
    expect(t.isexpired).toBe(d.expired === true)
    expect(t.passwordprotected).toBe(d.password !== undefined)
    expect(t.numberoffiles).toBe(d.files.length)
    if (d.password) {
      const unlocked = await api(svc, 'GET', `/transfer/${t.id}`, { query: { password: d.password } })
      expect(unlocked.body.data.files.map((f: { filesize: number }) => f.filesize)).toEqual(d.files.map((f) => f.size))
    } else {
      expect(t.files.map((f) => [f.filename, f.filesize])).toEqual(d.files.map((f) => [f.name, f.size]))
    }
  }
  expect(demo.some((d) => d.password === DEMO_PASSWORD)).toBe(true)
  // The bytes are on disk in the given data dir, one file per stored file.
  const stored = (await Promise.all((await readdir(join(dataDir, 'transfers'))).map((id) => readdir(join(dataDir, 'transfers', id, 'files'))))).flat()
  expect(stored.length).toBe(demo.reduce((n, d) => n + d.files.length, 0))
  // The last byte of the largest demo file is served.
  const biggest = all.flatMap((t) => t.files.map((f) => ({ t, f }))).sort((a, b) => b.f.filesize - a.f.filesize)[0]!
  const url = (await api(svc, 'GET', `/transfer/${biggest.t.id}`)).body.data.files.find((f: { filename: string }) => f.filename === biggest.f.filename).downloadurl
  const tail = await get(svc, url, { range: `bytes=${biggest.f.filesize - 1}-${biggest.f.filesize - 1}` })
  expect(tail.status).toBe(206)
  expect(tail.bytes.length).toBe(1)
}, 300_000)
