// The disk cache's block check, held against the sums worked out plainly (BigInt) and
// against the kinds of damage a cache file meets.
import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createHash } from 'node:crypto'
import { BLOCK_SUM_BYTES, blockSum, blockSumIs, sumMemory } from '../../src/read/block-sum.js'
import { pieceHash } from '../../src/read/piece-hash.js'

/** The check as block-sum.ts describes it: four lanes of 32-bit words, each with its sum and its sum of running sums. */
function plainSum(bytes: Buffer): Buffer {
  const padded = Buffer.alloc(Math.ceil(bytes.length / 16) * 16)
  bytes.copy(padded)
  const s1 = [0n, 0n, 0n, 0n]
  const s2 = [0n, 0n, 0n, 0n]
  for (let at = 0; at < padded.length; at += 16) {
    for (let lane = 0; lane < 4; lane++) {
      s1[lane]! += BigInt(padded.readUInt32LE(at + 4 * lane))
      s2[lane]! += s1[lane]!
    }
  }
  const out = Buffer.alloc(BLOCK_SUM_BYTES)
  // In memory: S1 of lanes 0-1, S2 of lanes 0-1, S1 of lanes 2-3, S2 of lanes 2-3.
  const order = [s1[0], s1[1], s2[0], s2[1], s1[2], s1[3], s2[2], s2[3]]
  order.forEach((v, i) => out.writeBigUInt64LE(BigInt.asUintN(64, v!), 8 * i))
  return out
}

/** `bytes` cut into parts at the given lengths (the rest as the last part). */
function cut(bytes: Buffer, lengths: number[]): Buffer[] {
  const parts: Buffer[] = []
  let at = 0
  for (const n of lengths) {
    parts.push(bytes.subarray(at, at + n))
    at += n
  }
  parts.push(bytes.subarray(at))
  return parts
}

describe('block check', () => {
  it('is the plain sums, whatever the length and however the bytes come in parts', () => {
    for (const length of [0, 1, 15, 16, 17, 4096, 65_535, 65_536, 65_537, 200_001, 1024 * 1024]) {
      const bytes = randomBytes(length)
      const want = plainSum(bytes)
      expect(blockSum(bytes).equals(want)).toBe(true)
      expect(blockSum(cut(bytes, [3, 7, 65_536, 13])).equals(want)).toBe(true)
      expect(blockSumIs(bytes, want)).toBe(true)
    }
  })

  it('the sums of a full 1 MiB block of 0xff bytes are exact (nothing wraps)', () => {
    const bytes = Buffer.alloc(1024 * 1024, 0xff)
    const sum = blockSum(bytes)
    const words = BigInt(bytes.length / 16)
    const max = 0xffff_ffffn
    expect(sum.readBigUInt64LE(0)).toBe(words * max)
    expect(sum.readBigUInt64LE(16)).toBe(max * ((words * (words + 1n)) / 2n))
  })

  it('catches a flipped bit anywhere, a changed word, two words changed to cancel in S1, bytes zeroed, bytes moved', () => {
    const block = randomBytes(1024 * 1024)
    const sum = blockSum(block)
    const damaged = (change: (b: Buffer) => void) => {
      const copy = Buffer.from(block)
      change(copy)
      return copy
    }
    for (let i = 0; i < 200; i++) {
      const byte = Math.floor(Math.random() * block.length)
      const bit = 1 << Math.floor(Math.random() * 8)
      expect(blockSumIs(damaged((b) => void (b[byte]! ^= bit)), sum)).toBe(false)
    }
    // bit 31 of two words of one lane: +2^31 at one, -2^31 at the other
    expect(blockSumIs(damaged((b) => {
      b[16 * 5 + 3]! ^= 0x80
      b[16 * 900 + 3]! ^= 0x80
    }), sum)).toBe(false)
    // +d at one word of a lane and -d at another
    expect(blockSumIs(damaged((b) => {
      const x = b.readUInt32LE(16 * 10 + 4)
      const y = b.readUInt32LE(16 * 11 + 4)
      const d = Math.min(0xffff_ffff - x, y, 12_345)
      b.writeUInt32LE(x + d, 16 * 10 + 4)
      b.writeUInt32LE(y - d, 16 * 11 + 4)
    }), sum)).toBe(false)
    // two words of a lane swapped
    expect(blockSumIs(damaged((b) => {
      const x = b.readUInt32LE(16 * 2)
      b.writeUInt32LE(b.readUInt32LE(16 * 7), 16 * 2)
      b.writeUInt32LE(x, 16 * 7)
    }), sum)).toBe(false)
    // a torn write: the last 100 KiB never reached the disk
    expect(blockSumIs(damaged((b) => void b.fill(0, b.length - 100 * 1024)), sum)).toBe(false)
    // the bytes one word further on (read at the wrong offset)
    expect(blockSumIs(damaged((b) => void block.copy(b, 0, 4)), sum)).toBe(false)
    // another block's bytes
    expect(blockSumIs(randomBytes(block.length), sum)).toBe(false)
  })

  it('bytes in sum memory, shared or plain (checked where they lie), have the same check as anywhere else, damage caught alike', () => {
    const shared = sumMemory(2 * 70_000, true)
    const plain = sumMemory(70_000, false)
    expect(shared.buffer).toBeInstanceOf(SharedArrayBuffer)
    expect(plain.buffer).not.toBeInstanceOf(SharedArrayBuffer)
    const buffers = [shared.subarray(0, 70_000), shared.subarray(70_000), plain]
    for (const [i, length] of [[0, 70_000], [1, 69_999], [2, 17]] as const) {
      const bytes = randomBytes(length)
      const into = buffers[i]!.subarray(0, length)
      bytes.copy(into)
      const want = plainSum(bytes)
      expect(blockSumIs(into, want)).toBe(true)
      expect(blockSum(into).equals(want)).toBe(true)
      into[length - 1]! ^= 1
      expect(blockSumIs(into, want)).toBe(false)
    }
  })
})

describe('block checks worked out by the hashing threads', () => {
  it('are the plain sums of each block, with the MD5 of the piece, for many pieces at once in one memory', async () => {
    const blockSize = 256 * 1024
    const memory = sumMemory(16 * blockSize, true)
    // Lengths past a stretch, with tails of every kind, and one empty.
    const lengths = [blockSize, blockSize - 1, 65_536 + 15, 17, 1, 0, 200_003, blockSize - 16]
    const pieces = [0, 1, 2, 3].map((p) => lengths.slice(p * 2, p * 2 + 2).map((length, i) => {
      const block = memory.subarray((p * 2 + i) * blockSize, (p * 2 + i + 1) * blockSize)
      randomBytes(blockSize).copy(block)
      return { memory: block, length }
    }))
    // The four pieces hashed at once: their threads sum blocks of the same memory side by side.
    const hashed = await Promise.all(pieces.map((parts) => pieceHash(parts)))
    hashed.forEach((h, p) => {
      const md5 = createHash('md5')
      pieces[p]!.forEach((part, i) => {
        const bytes = part.memory.subarray(0, part.length)
        md5.update(bytes)
        expect(h.sums[i]).toEqual(plainSum(bytes))
        expect(blockSumIs(bytes, h.sums[i]!)).toBe(true)
      })
      expect(h.md5).toBe(md5.digest('hex'))
    })
  })

  it('are left to the disk cache for bytes outside a shared sum memory', async () => {
    const bytes = Buffer.from(new SharedArrayBuffer(4096))
    randomBytes(4096).copy(bytes)
    const h = await pieceHash([{ memory: bytes, length: 4096 }])
    expect(h.sums).toEqual([null])
  })
})
