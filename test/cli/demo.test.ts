// `npm start` runs `transferfs demo`: the local service with the demo transfers, signed
// in and mounted in the foreground; what it prints works, sending works, and Ctrl-C
// unmounts, stops the service and removes the demo's service bytes.
import { readdir, readFile, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { isMounted, tempDir, unmountAll, waitFor } from '../support/mount.js'
import { cli, startCli } from './harness.js'

afterAll(async () => {
  await unmountAll()
})

describe('transferfs demo', () => {
  it('mounts the demo inbox, sends what is copied into outbox/, and Ctrl-C ends it cleanly', async () => {
    const home = await tempDir()
    const mountDir = path.join(home, 'demo-mount')
    const stateDir = path.join(home, '.demo')
    const child = startCli(['demo', '--mount-dir', mountDir, '--state-dir', stateDir])
    let out = ''
    let err = ''
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()))
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()))
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    try {
      expect(await waitFor(() => out.includes('Ctrl-C here unmounts'), 120_000, 200), err).toBe(true)
      expect(out).toMatch(/ls -l \S*demo-mount\/inbox/)
      const inbox = await readdir(path.join(mountDir, 'inbox'))
      expect(inbox.length).toBeGreaterThanOrEqual(9)
      const report = inbox.find((n) => n.includes('Quarterly report'))!
      expect(await readFile(path.join(mountDir, 'inbox', report, 'report.txt'), 'utf8')).not.toBe('')

      // As a new user would next: the commands reach the demo's mount, though it keeps its own
      // data folder and they are given none (the configured one has no mount).
      const saved = process.env.TRANSFERFS_DATA_DIR
      process.env.TRANSFERFS_DATA_DIR = path.join(home, 'configured-data')
      try {
        const pin = await cli(['pin', path.join(mountDir, 'inbox', report)])
        expect(pin.code, pin.stderr).toBe(0)
        expect(pin.stdout).toMatch(/^pinned inbox\/.*Quarterly report/)
        const status = await cli(['status', '--json', mountDir])
        expect(status.code, status.stderr).toBe(0)
        expect((JSON.parse(status.stdout) as { mounted: boolean }).mounted).toBe(true)
      } finally {
        if (saved === undefined) delete process.env.TRANSFERFS_DATA_DIR
        else process.env.TRANSFERFS_DATA_DIR = saved
      }

      await writeFile(path.join(mountDir, 'outbox', 'hello.txt'), 'hello from the demo test\n')
      expect(await waitFor(async () => (await readdir(path.join(mountDir, 'sent'))).some((n) => n.includes('hello.txt')), 30_000, 200)).toBe(true)
      // The status text is rewritten once a second.
      expect(await waitFor(async () => /done\s+hello\.txt/.test(await readFile(path.join(mountDir, '.status'), 'utf8')), 10_000, 200)).toBe(true)
    } finally {
      child.kill('SIGINT')
    }
    expect(await exited).toBe(0)
    expect(err).toContain('unmounted')
    expect(await isMounted(mountDir)).toBe(false)
    // The 1 GiB of demo bytes do not linger.
    await expect(stat(path.join(stateDir, 'service'))).rejects.toThrow()
  }, 180_000)
})
