// The NFS server's wire layer alone: XDR items, record marking (fragments, records split
// anywhere, lengths past the limit) and RPC calls (headers, AUTH_UNIX, what is refused or dropped).
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { markRecord, RecordError, RecordReader } from '../../src/nfs/records.js'
import { AcceptStat, acceptedReply, AUTH_UNIX, readCall } from '../../src/nfs/rpc.js'
import { XdrError, XdrReader, XdrWriter } from '../../src/nfs/xdr.js'

/** A record mark: the length, and the top bit on the last fragment. */
const mark = (length: number, last: boolean): Buffer => {
  const b = Buffer.alloc(4)
  b.writeUInt32BE(((last ? 0x8000_0000 : 0) | length) >>> 0)
  return b
}

function authUnix(uid: number, gid: number, gids: number[] = [], machine = 'mac'): Buffer {
  const w = new XdrWriter().uint32(1234).string(machine).uint32(uid).uint32(gid).uint32(gids.length)
  for (const g of gids) w.uint32(g)
  return w.bytes()
}

function call(opts: { xid?: number; rpcvers?: number; prog?: number; vers?: number; proc?: number; flavor?: number; cred?: Buffer; args?: Buffer } = {}): Buffer {
  const w = new XdrWriter()
    .uint32(opts.xid ?? 7).uint32(0).uint32(opts.rpcvers ?? 2)
    .uint32(opts.prog ?? 100003).uint32(opts.vers ?? 3).uint32(opts.proc ?? 0)
    .uint32(opts.flavor ?? AUTH_UNIX).opaque(opts.cred ?? authUnix(1000, 1000, [4, 24]))
    .uint32(0).opaque(Buffer.alloc(0))
  if (opts.args) w.fixed(opts.args)
  return Buffer.from(w.bytes())
}

describe('XDR', () => {
  it('writes and reads back each item, padded to 4 bytes', () => {
    const w = new XdrWriter(4).uint32(0xffff_ffff).int32(-2).uint64(2 ** 40 + 3).bool(true).string('héllo').opaque(Buffer.from([1, 2, 3])).fixed(Buffer.from([9]))
    const bytes = w.bytes()
    expect(bytes.length % 4).toBe(0)
    const r = new XdrReader(bytes)
    expect([r.uint32(), r.int32(), r.uint64(), r.bool(), r.string(100), [...r.opaque(3)], [...r.fixed(1)]]).toEqual([0xffff_ffff, -2, 2 ** 40 + 3, true, 'héllo', [1, 2, 3], [9]])
    r.end()
  })

  it('refuses what is short, too long or out of range with XdrError', () => {
    expect(() => new XdrReader(Buffer.alloc(3)).uint32()).toThrow(XdrError)
    expect(() => new XdrReader(new XdrWriter().opaque(Buffer.alloc(10)).bytes()).opaque(9)).toThrow(XdrError)
    // A length of 4 GiB - 1 in a record of 8 bytes: refused, nothing allocated.
    expect(() => new XdrReader(Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0])).opaque(2 ** 32)).toThrow(XdrError)
    expect(() => new XdrReader(new XdrWriter().uint32(2).bytes()).bool()).toThrow(XdrError)
    expect(() => new XdrReader(new XdrWriter().uint64(2n ** 63n).bytes()).uint64()).toThrow(XdrError)
    expect(() => new XdrReader(Buffer.alloc(8)).end()).toThrow(XdrError)
  })
})

describe('record marking', () => {
  it('joins a record sent as several fragments, whatever the chunks it arrives in', () => {
    fc.assert(fc.property(
      fc.array(fc.uint8Array({ maxLength: 40 }), { minLength: 1, maxLength: 5 }),
      fc.array(fc.integer({ min: 1, max: 17 }), { minLength: 1, maxLength: 10 }),
      (fragments, cuts) => {
        const stream = Buffer.concat(fragments.flatMap((f, i) => [mark(f.length, i === fragments.length - 1), Buffer.from(f)]))
        const reader = new RecordReader(1000)
        const records: Buffer[] = []
        let at = 0
        for (let i = 0; at < stream.length; i++) {
          const n = cuts[i % cuts.length] as number
          records.push(...reader.push(stream.subarray(at, at + n)))
          at += n
        }
        expect(records.map((r) => [...r])).toEqual([[...Buffer.concat(fragments.map((f) => Buffer.from(f)))]])
        expect(reader.midRecord).toBe(false)
      },
    ))
  })

  it('gives every record of a chunk that holds several', () => {
    const reader = new RecordReader(100)
    const chunk = Buffer.concat([mark(1, true), Buffer.from([1]), mark(0, true), mark(2, true), Buffer.from([2, 3])])
    expect(reader.push(chunk).map((r) => [...r])).toEqual([[1], [], [2, 3]])
  })

  it('refuses a record past the limit from its mark, before its bytes arrive', () => {
    expect(() => new RecordReader(1 << 20).push(mark(0x7fff_ffff, true))).toThrow(RecordError)
    // Fragments that are each small but add up past the limit.
    const reader = new RecordReader(10)
    expect(reader.push(Buffer.concat([mark(6, false), Buffer.alloc(6)]))).toEqual([])
    expect(() => reader.push(mark(6, true))).toThrow(RecordError)
  })

  it('marks a reply as one last fragment', () => {
    const out = markRecord(Buffer.from([0, 0, 0, 0, 5, 6]))
    expect(new RecordReader(10).push(out).map((r) => [...r])).toEqual([[5, 6]])
  })
})

describe('RPC calls', () => {
  it('reads the header and the AUTH_UNIX credential, leaving the arguments', () => {
    const incoming = readCall(call({ xid: 99, proc: 1, args: Buffer.from([0, 0, 0, 42]) }))
    expect(incoming.kind).toBe('call')
    if (incoming.kind !== 'call') return
    const { args, ...header } = incoming.call
    expect(header).toEqual({ xid: 99, prog: 100003, vers: 3, proc: 1, cred: { flavor: AUTH_UNIX, stamp: 1234, machine: 'mac', uid: 1000, gid: 1000, gids: [4, 24] } })
    expect(args.uint32()).toBe(42)
  })

  /** The reply's words after its record mark room: xid, REPLY, then the reply's own. */
  const words = (reply: Buffer): number[] => Array.from({ length: (reply.length - 4) / 4 }, (_, i) => reply.readUInt32BE(4 + 4 * i))

  it('denies another RPC version with RPC_MISMATCH and an unknown flavour or a bad AUTH_UNIX with AUTH_BADCRED', () => {
    const refused = (c: Buffer): number[] => {
      const incoming = readCall(c)
      if (incoming.kind !== 'refused') throw new Error(`not refused: ${incoming.kind}`)
      return words(incoming.reply)
    }
    expect(refused(call({ xid: 5, rpcvers: 3 }))).toEqual([5, 1, 1, 0, 2, 2])
    expect(refused(call({ xid: 6, flavor: 6 }))).toEqual([6, 1, 1, 1, 1])
    expect(refused(call({ xid: 8, cred: authUnix(1, 1, Array(17).fill(0)) }))).toEqual([8, 1, 1, 1, 1])
    expect(refused(call({ xid: 9, cred: Buffer.alloc(3) }))).toEqual([9, 1, 1, 1, 1])
  })

  it('drops a record without a whole header, and a reply sent to it', () => {
    expect(readCall(Buffer.alloc(5)).kind).toBe('drop')
    expect(readCall(new XdrWriter().uint32(1).uint32(1).bytes()).kind).toBe('drop')
  })

  it('never throws on any record, random or truncated', () => {
    const whole = call({ args: Buffer.alloc(16) })
    fc.assert(fc.property(fc.oneof(
      fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
      fc.integer({ min: 0, max: whole.length }).map((n) => whole.subarray(0, n)),
    ), (record) => {
      const incoming = readCall(record)
      expect(['call', 'refused', 'drop']).toContain(incoming.kind)
    }))
  })

  it('writes an accepted reply: null verifier, then the status', () => {
    expect(words(acceptedReply(3, AcceptStat.GARBAGE_ARGS).bytes())).toEqual([3, 1, 0, 0, 0, 4])
  })
})
