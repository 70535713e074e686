// The mount's source names its data folder (mountinfo.ts), and a path is found on its mount:
// pure, from mountinfo text.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { dataDirOfSource, mountHolding, mountSourceName, parseMountInfo } from '../../src/fuse/mountinfo.js'

describe('the data folder in a mount\'s source', () => {
  it('reads back any folder path, with nothing in it that libfuse or mountinfo would split or escape', () => {
    fc.assert(fc.property(fc.string({ minLength: 1, maxLength: 60, unit: 'binary' }), (name) => {
      const dir = `/home/ann/${name.replace(/\//g, '_').replace(/\0/g, '')}`
      const source = mountSourceName('transferfs', dir)
      expect(source).toMatch(/^transferfs:\/[A-Za-z0-9/._~+@%-]*$/)
      expect(dataDirOfSource('transferfs', source)).toBe(dir.replace(/\/+$/, '') || '/')
    }))
    expect(mountSourceName('transferfs', '/root/a, b')).toBe('transferfs:/root/a%2C%20b')
  })

  it('names none without a data folder, and for another filesystem\'s or an older version\'s source', () => {
    expect(mountSourceName('transferfs')).toBe('transferfs')
    expect(dataDirOfSource('transferfs', 'transferfs')).toBeNull()
    expect(dataDirOfSource('transferfs', 'sshfs:/x')).toBeNull()
    expect(dataDirOfSource('transferfs', 'transferfs:/a b')).toBeNull()
  })

  it('finds the mount a path is on: the deepest mount point holding it, the topmost mount there', () => {
    const info = [
      '22 1 8:1 / / rw - ext4 /dev/sda1 rw',
      '40 22 0:50 / /home/ann/Transfers rw - fuse.transferfs transferfs:/home/ann/.local/share/transferfs rw',
      '41 22 0:51 / /home/ann/Transfers2 rw - fuse.transferfs transferfs rw',
      '42 40 0:52 / /home/ann/Transfers rw - fuse.transferfs transferfs:/tmp/demo%20data rw',
    ].join('\n')
    const mounts = parseMountInfo(info)
    const on = mountHolding(mounts, '/home/ann/Transfers/inbox/x')!
    expect(dataDirOfSource('transferfs', on.source)).toBe('/tmp/demo data')
    expect(mountHolding(mounts, '/home/ann/Transfers2')?.minor).toBe(51)
    expect(mountHolding(mounts, '/home/ann/Transfers22/x')?.fsType).toBe('ext4')
  })
})
