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

  it('refuses secrets in mount options (api_key=, password=, a proxy= URL with a password) and says where they go', async () => {
    for (const [option, key, variable] of [
      ['api_key=k-123', 'api-key', 'TRANSFERFS_API_KEY'], ['api-key=k-123', 'api-key', 'TRANSFERFS_API_KEY'],
      ['password=tr-pw', 'password', 'TRANSFERFS_PASSWORD'],
      ['proxy=http://ann:pw-9@proxy.example:3128', 'proxy', 'TRANSFERFS_PROXY'], ['proxy=ann:pw-9@proxy.example:3128', 'proxy', 'TRANSFERFS_PROXY'],
    ] as const) {
      const r = await run(HELPER, ['transferfs', '/mnt/t', '-f', '-o', `_netdev,${option},chunk_size=16M`])
      expect(r.code, option).toBe(1)
      expect(r.stdout, option).toBe('')
      expect(r.stderr, option).toContain('readable by every user')
      expect(r.stderr, option).toContain(`transferfs config set ${key} -`)
      expect(r.stderr, option).toContain(variable)
      expect(r.stderr, option).not.toMatch(/k-123|tr-pw|pw-9/)
    }
    // A proxy without a password is no secret: it is passed on.
    const r = await run(HELPER, ['transferfs', '/mnt/t', '-f', '-o', 'proxy=http://ann@proxy.example:3128,bin=/x/transferfs'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout.trim()).toBe("'/x/transferfs' mount '/mnt/t' --proxy 'http://ann@proxy.example:3128'")
  })

  it('a call without a folder is a usage error', async () => {
    const r = await run(HELPER, ['transferfs'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('usage: mount.transferfs')
  })
})

describe('systemd user unit template', () => {
  it('mounts the instance\'s folder in the foreground and unmounts on stop, whichever way the folder was escaped', async () => {
    const unit = await readFile(path.join(CONTRIB, 'systemd/transferfs@.service'), 'utf8')
    expect(unit).toMatch(/^ExecStart=\/usr\/bin\/transferfs mount %I --foreground$/m)
    expect(unit).toMatch(/^ExecStop=\/usr\/bin\/transferfs unmount %I$/m)
    expect(unit).toMatch(/^Documentation=man:transferfs\(1\)$/m)
    expect(unit).toMatch(/^WantedBy=default\.target$/m)
    // %I is the instance unescaped; relative to the unit's working folder /, both escapings
    // systemd-escape makes of a home folder name that folder (systemd-analyze verify, with
    // the package installed, runs in the package test).
    expect(unit).toMatch(/^WorkingDirectory=\/$/m)
    const folder = '/home/alice/My Transfers'
    for (const flags of [[], ['--path']]) {
      const escaped = (await run('systemd-escape', [...flags, folder])).stdout.trim()
      const unescaped = (await run('systemd-escape', ['-u', '--', escaped])).stdout.trim()
      expect(path.resolve('/', unescaped)).toBe(folder)
    }
  })
})
