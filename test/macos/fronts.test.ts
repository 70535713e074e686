// The choice of front by platform, and the macOS commands as the NFS front writes and reads
// them: pure logic, no Mac and no mount needed.
import { existsSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { chooseFront, frontKindOf, platformOf } from '../../src/cli/fronts/front.js'
import { diskutilUnmountCommand, isLoopbackNfs, mountAt, mountNfsCommand, parseMountList, shownCommand, umountCommand } from '../../src/cli/fronts/macos-commands.js'
import { systemCommandPath } from '../../src/cli/fronts/system-command.js'
import { mountCommands } from '../../src/cli/serve-nfs.js'
import { REPO } from '../support/mount.js'

/** What `mount` prints on a Mac with the loopback export mounted, a share and the automounter (macOS 14). */
const MAC_MOUNTS = `/dev/disk3s1s1 on / (apfs, sealed, local, read-only, journaled)
devfs on /dev (devfs, local, nobrowse)
/dev/disk3s5 on /System/Volumes/Data (apfs, local, journaled, nobrowse, protect)
map auto_home on /System/Volumes/Data/home (autofs, automounted, nobrowse)
//me@nas.local/Projects on /Volumes/Projects (smbfs, nodev, nosuid, mounted by me)
127.0.0.1:/ on /Users/me/My Transfers (nfs, nodev, nosuid, mounted by me)
`

describe('the front of each platform', () => {
  it('FUSE on Linux, NFS on macOS, and a clear refusal elsewhere', () => {
    expect(frontKindOf('linux')).toBe('fuse')
    expect(frontKindOf('darwin')).toBe('nfs')
    expect(() => frontKindOf('win32')).toThrow(/mounts on Linux \(FUSE\) and macOS \(NFS\), not on win32 yet/)
  })

  it('is the real platform unless TRANSFERFS_PLATFORM names another', () => {
    expect(platformOf({}, 'linux')).toBe('linux')
    expect(platformOf({ TRANSFERFS_PLATFORM: 'darwin' }, 'linux')).toBe('darwin')
    expect(platformOf({ TRANSFERFS_PLATFORM: '' }, 'darwin')).toBe('darwin')
  })

  it('loads the front chosen', async () => {
    expect((await chooseFront('darwin')).kind).toBe('nfs')
    expect((await chooseFront('linux')).kind).toBe('fuse')
  })
})

describe('the macOS commands', () => {
  it('mount_nfs: NFSv3 over TCP on the server\'s one port, a reserved port, local locks, 1 MiB reads and writes', () => {
    expect(mountNfsCommand(20490, '/Users/me/My Transfers')).toEqual({
      command: 'mount_nfs',
      args: ['-o', 'vers=3,tcp,port=20490,mountport=20490,resvport,nolocks,locallocks,rsize=1048576,wsize=1048576', '127.0.0.1:/', '/Users/me/My Transfers'],
    })
  })

  it('umount, forced only when asked, and diskutil\'s unmount', () => {
    expect(umountCommand('/Users/me/T')).toEqual({ command: 'umount', args: ['/Users/me/T'] })
    expect(umountCommand('/Users/me/T', true)).toEqual({ command: 'umount', args: ['-f', '/Users/me/T'] })
    expect(diskutilUnmountCommand('/Users/me/T')).toEqual({ command: 'diskutil', args: ['unmount', '/Users/me/T'] })
  })

  it('serve-nfs prints the very command mount runs, quoted for a shell', () => {
    const dir = "/Users/me/Bob's Transfers"
    expect(mountCommands(20490, dir).macos).toBe(shownCommand(mountNfsCommand(20490, dir)))
    expect(mountCommands(20490, dir).macos).toBe(
      "mount_nfs -o vers=3,tcp,port=20490,mountport=20490,resvport,nolocks,locallocks,rsize=1048576,wsize=1048576 127.0.0.1:/ '/Users/me/Bob'\\''s Transfers'",
    )
  })

  it('reads macOS\'s mount listing: blanks in a mount point, the type, which mount is the loopback export', () => {
    const mounts = parseMountList(MAC_MOUNTS)
    expect(mounts).toHaveLength(6)
    const ours = mountAt(mounts, '/Users/me/My Transfers')
    expect(ours).toEqual({ source: '127.0.0.1:/', mountPoint: '/Users/me/My Transfers', fsType: 'nfs' })
    expect(isLoopbackNfs(ours!)).toBe(true)
    expect(isLoopbackNfs(mountAt(mounts, '/Volumes/Projects')!)).toBe(false)
    expect(mountAt(mounts, '/System/Volumes/Data/home')?.fsType).toBe('autofs')
    expect(mountAt(mounts, '/Users/me')).toBeUndefined()
    expect(parseMountList('garbage\n\n')).toEqual([])
  })

  it('finds a command on PATH first, then in the system\'s folders', () => {
    const tools = path.join(REPO, 'test/support/macos-tools')
    expect(systemCommandPath('umount', `${tools}:/usr/bin`)).toBe(path.join(tools, 'umount'))
    const system = systemCommandPath('umount', '')
    expect(path.isAbsolute(system) && existsSync(system)).toBe(true)
    expect(systemCommandPath('no-such-command-here', '')).toBe('no-such-command-here')
  })
})
