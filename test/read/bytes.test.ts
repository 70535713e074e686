// Copying a read's bytes out, pure: into and out of shared memory (the block slots), parts in order, and what does not fit.
import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { copyBytes, copyInto } from '../../src/read/bytes.js'

const shared = (n: number) => Buffer.from(new SharedArrayBuffer(n))

describe('copyInto', () => {
  it('copies between shared and plain memory at an offset, touching nothing around', () => {
    const from = shared(4096)
    from.set(randomBytes(4096))
    const target = Buffer.alloc(8192, 7)
    expect(copyInto(from.subarray(100, 1100), target, 3000)).toBe(1000)
    expect(target.subarray(3000, 4000).equals(from.subarray(100, 1100))).toBe(true)
    expect([target[2999], target[4000]]).toEqual([7, 7])
    const back = shared(2000)
    expect(copyInto(target.subarray(3000, 4000), back, 500)).toBe(1000)
    expect(back.subarray(500, 1500).equals(from.subarray(100, 1100))).toBe(true)
    expect([back[499], back[1500]]).toEqual([0, 0])
  })

  it('copies only what fits, and nothing from an empty buffer or into a full one', () => {
    const target = Buffer.alloc(10)
    expect(copyInto(Buffer.from('abcdefgh'), target, 6)).toBe(4)
    expect(target.subarray(6).toString()).toBe('abcd')
    expect(copyInto(Buffer.alloc(0), target, 0)).toBe(0)
    expect(copyInto(Buffer.from('x'), target, 10)).toBe(0)
  })
})

describe('copyBytes', () => {
  it('copies parts one after another from the target\'s start', () => {
    const parts = [shared(3), Buffer.from('defg'), shared(2)]
    parts[0]!.write('abc')
    parts[2]!.write('hi')
    const target = Buffer.alloc(12, 0x2e)
    expect(copyBytes(parts, target)).toBe(9)
    expect(target.toString()).toBe('abcdefghi...')
  })
})
