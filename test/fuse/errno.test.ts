// Pure logic of the adapter: errno mapping, the exactly-once numeric answer, mountinfo parsing.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { DeadlineError, IntegrityError, NetworkError, OfflineError, ProxyError, ServiceError, UnsupportedError } from '../../src/api/errors.js'
import { FuseAdapter } from '../../src/fuse/adapter.js'
import { ERRNO, errnoOf } from '../../src/vfs/errno.js'
import { parseMountInfo } from '../../src/fuse/mountinfo.js'
import { FsError } from '../../src/vfs/core.js'
import { MemoryCore } from './fixtures/memory-core.js'

describe('errnoOf', () => {
  it('maps the core and client errors', () => {
    expect(errnoOf(new FsError('ENOENT'))).toBe(2)
    expect(errnoOf(new FsError('EROFS'))).toBe(30)
    expect(errnoOf(new ServiceError('x', 401, 'AccessDenied'))).toBe(ERRNO.EACCES)
    expect(errnoOf(new ServiceError('x', 404, 'NotFound'))).toBe(ERRNO.ENOENT)
    expect(errnoOf(new ServiceError('x', 409, 'TransferExpired'))).toBe(ERRNO.ENOENT)
    expect(errnoOf(new ServiceError('x', 409, 'InvalidTransferState'))).toBe(ERRNO.EIO)
    expect(errnoOf(new ServiceError('x', 500, null))).toBe(ERRNO.EIO)
    expect(errnoOf(new NetworkError('down', 'ECONNREFUSED'))).toBe(ERRNO.EIO)
    expect(errnoOf(new IntegrityError('bad', 'a', 'b'))).toBe(ERRNO.EIO)
    expect(errnoOf(new DeadlineError('still failing', { cause: new ServiceError('x', 503, null) }))).toBe(ERRNO.EIO)
    expect(errnoOf(new OfflineError('unreachable', 'OFFLINE'))).toBe(ERRNO.EHOSTDOWN)
    // Unreachable as configured: only new settings help.
    expect(errnoOf(new NetworkError('untrusted', 'SELF_SIGNED_CERT_IN_CHAIN'))).toBe(ERRNO.EHOSTDOWN)
    expect(errnoOf(new ProxyError('credentials', null, 'http://p:1 (HTTPS_PROXY)', 407))).toBe(ERRNO.EHOSTDOWN)
    expect(errnoOf(new ProxyError('down', 'ECONNREFUSED', 'http://p:1 (HTTPS_PROXY)'))).toBe(ERRNO.EIO)
    expect(errnoOf(new UnsupportedError('2fa'))).toBe(ERRNO.EOPNOTSUPP)
    expect(errnoOf(new TypeError('bug'))).toBe(ERRNO.EIO)
    expect(errnoOf(undefined)).toBe(ERRNO.EIO)
  })
})

type Outcome = { kind: 'value' | 'now'; value: unknown } | { kind: 'reject'; error: unknown } | { kind: 'sync'; error: unknown }

const values = fc.oneof(
  fc.integer({ min: 0, max: 1000 }), fc.constant(undefined), fc.constant(null), fc.string(), fc.constant(-1),
  // Bytes, as a read answers them: ones that fit the 4-byte buffer, and ones that do not.
  fc.uint8Array({ maxLength: 8 }).map((a) => Buffer.from(a)), fc.constant([Buffer.from('ab'), Buffer.from('cde')]),
)
const outcomes = fc.oneof(
  fc.record({ kind: fc.constant('value' as const), value: values }),
  // Answered without a promise (a read's bytes at hand).
  fc.record({ kind: fc.constant('now' as const), value: values }),
  fc.record({ kind: fc.constant('reject' as const), error: fc.oneof(fc.constant(new FsError('EACCES')), fc.constant(new ServiceError('x', 401, null)), fc.constant('str'), fc.constant(undefined)) }),
  fc.record({ kind: fc.constant('sync' as const), error: fc.constant(new FsError('ENOENT')) }),
)

describe('FuseAdapter callbacks', () => {
  it('answer exactly once, always with an integer, whatever the core does', async () => {
    await fc.assert(
      fc.asyncProperty(outcomes, async (o: Outcome) => {
        const core = new MemoryCore().addFile('/f', 'x')
        const act = () => {
          if (o.kind === 'sync') throw o.error
          if (o.kind === 'reject') return Promise.reject(o.error)
          return o.kind === 'now' ? o.value : Promise.resolve(o.value)
        }
        Object.assign(core, { open: act, write: act, read: act })
        const adapter = new FuseAdapter(core, { readTimeoutMs: 500, writeTimeoutMs: 500, metadataTimeoutMs: 500 })
        for (const call of [
          (cb: (...a: unknown[]) => void) => adapter.ops.open!('/f', 0, cb),
          (cb: (...a: unknown[]) => void) => adapter.ops.write!('/f', 10, Buffer.from('abc'), 3, 0, cb),
          (cb: (...a: unknown[]) => void) => adapter.ops.read!('/f', 10, Buffer.alloc(4), 4, 0, cb),
        ]) {
          const answers: unknown[][] = []
          call((...a) => answers.push(a))
          await new Promise((r) => setTimeout(r, 5))
          expect(answers).toHaveLength(1)
          expect(Number.isInteger(answers[0]![0])).toBe(true)
        }
      }),
      { numRuns: 60 },
    )
  })

  it('releases a handle the core opened after the deadline answered', async () => {
    const core = new MemoryCore().addFile('/f', 'x')
    let finish!: (fh: number) => void
    core.open = () => new Promise<number>((r) => (finish = r))
    const released: number[] = []
    core.release = async (_p, fh) => void released.push(fh)
    const adapter = new FuseAdapter(core, { readTimeoutMs: 50, writeTimeoutMs: 50, metadataTimeoutMs: 50 })
    const answers: unknown[][] = []
    adapter.ops.open!('/f', 0, (...a: unknown[]) => answers.push(a))
    await new Promise((r) => setTimeout(r, 100))
    expect(answers).toEqual([[-ERRNO.EIO]])
    finish(42)
    await new Promise((r) => setTimeout(r, 10))
    expect(released).toEqual([42])
    expect(adapter.openHandles).toBe(0)
  })

  it('sets fuse-native timers above its own deadlines, and none for read, which answers under its own', () => {
    const adapter = new FuseAdapter(new MemoryCore(), { readTimeoutMs: 60_000, writeTimeoutMs: 30_000, metadataTimeoutMs: 10_000 })
    const t = adapter.fuseTimeouts()
    expect(t.read).toBe(false)
    expect(t.write).toBeGreaterThan(30_000)
    expect(t.getattr).toBeGreaterThan(10_000)
    expect(t.getattr).toBeLessThan(30_000)
  })
})

describe('parseMountInfo', () => {
  it('reads device, mount point and type, unescaping spaces', () => {
    const text = [
      '36 25 0:32 / /tmp/a\\040b rw,nosuid,nodev,relatime shared:1 - fuse.transferfs transferfs rw,user_id=0,group_id=0',
      '22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw',
    ].join('\n')
    expect(parseMountInfo(text)).toEqual([
      { major: 0, minor: 32, mountPoint: '/tmp/a b', fsType: 'fuse.transferfs', source: 'transferfs' },
      { major: 8, minor: 1, mountPoint: '/', fsType: 'ext4', source: '/dev/sda1' },
    ])
  })
})
