// contrib/: the fstab helper turns mount(8)'s call into a `transferfs mount` command line
// (checked with its -f "fake" switch, which prints instead of running), and the systemd
// unit mounts in the foreground and unmounts cleanly.
import { readFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { run } from '../support/mount.js'

const CONTRIB = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../contrib')
const HELPER = path.join(CONTRIB, 'mount.transferfs')

describe('mount.transferfs', () => {
  it('maps fstab options to flags, quotes values, ignores mount(8)\'s own options', async () => {
    const r = await run(HELPER, ['transferfs', '/mnt/my transfers', '-f', '-o',
      "defaults,_netdev,nofail,x-systemd.automount,allow_other,chunk_size=16M,message=it's here,read_only_flag,bin=/opt/bin/transferfs"])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout.trim()).toBe(
      "'/opt/bin/transferfs' mount '/mnt/my transfers' --allow-other --chunk-size '16M' --message 'it'\\''s here' --read-only-flag")
  })

  it('setuid=NAME runs the mount as that user with their HOME when root calls it', async () => {
    const r = await run(HELPER, ['transferfs', '/mnt/t', '-f', '-o', 'setuid=nobody,bin=/x/transferfs'])
    expect(r.code, r.stderr).toBe(0)
    if (os.userInfo().uid === 0) expect(r.stdout).toMatch(/^runuser -u 'nobody' -- env HOME='[^']+' '\/x\/transferfs' mount '\/mnt\/t'\n$/)
    else expect(r.stdout).toBe("'/x/transferfs' mount '/mnt/t'\n")
  })

  it('a call without a folder is a usage error', async () => {
    const r = await run(HELPER, ['transferfs'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('usage: mount.transferfs')
  })
})

describe('systemd user unit', () => {
  it('mounts in the foreground under systemd and unmounts on stop', async () => {
    const unit = await readFile(path.join(CONTRIB, 'systemd/transferfs.service'), 'utf8')
    expect(unit).toMatch(/^ExecStart=.*transferfs mount %h\/Transfers --foreground$/m)
    expect(unit).toMatch(/^ExecStop=.*transferfs unmount %h\/Transfers$/m)
    expect(unit).toMatch(/^WantedBy=default\.target$/m)
    const found = await run('sh', ['-c', 'command -v systemd-analyze'])
    // Checked by systemd itself where it is installed (the system manager's check: a
    // container has no user manager to ask).
    if (found.code === 0) {
      const verify = await run('systemd-analyze', ['verify', path.join(CONTRIB, 'systemd/transferfs.service')])
      expect(verify.code, verify.stderr).toBe(0)
    }
  })
})
