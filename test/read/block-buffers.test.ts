import { describe, expect, it } from 'vitest'
import { BlockBuffers } from '../../src/read/block-buffers.js'

describe('block buffers', () => {
  it('a buffer is used again only once every holder has let go', () => {
    const pool = new BlockBuffers(16, 4)
    const first = pool.take()
    first.memory.fill(1)
    const block = pool.seal(first, 10)
    expect(block[0]!.length).toBe(10)
    expect(pool.hold(block)).toBe(true) // the memory cache
    expect(pool.hold(block)).toBe(true) // a read
    pool.release(block) // the fetch
    pool.release(block) // the cache evicts it
    expect(pool.freeCount).toBe(0)
    // Still held by the read: a new fetch gets another buffer and the bytes stay.
    const second = pool.take()
    expect(second).not.toBe(first)
    second.memory.fill(2)
    expect(block[0]!.every((b) => b === 1)).toBe(true)
    pool.release(block) // the read gave its bytes back
    expect(pool.freeCount).toBe(1)
    expect(pool.take()).toBe(first)
  })

  it('a block whose buffer went to another block can no longer be held', () => {
    const pool = new BlockBuffers(16, 4)
    const buffer = pool.take()
    const old = pool.seal(buffer, 16)
    pool.release(old)
    expect(pool.hold(old)).toBe(false)
    const again = pool.take()
    expect(again).toBe(buffer)
    const fresh = pool.seal(again, 8)
    expect(pool.hold(old)).toBe(false)
    // Letting go of the old block does not touch the new one's holds.
    pool.release(old)
    expect(pool.hold(fresh)).toBe(true)
    pool.release(fresh)
    pool.release(fresh)
    expect(pool.freeCount).toBe(1)
  })

  it('blocks not from the pool (read from disk) are always there', () => {
    const pool = new BlockBuffers(16, 4)
    const block = [Buffer.alloc(16)]
    expect(pool.hold(block)).toBe(true)
    pool.release(block)
    expect(pool.freeCount).toBe(0)
  })

  it('keeps at most `keep` free buffers', () => {
    const pool = new BlockBuffers(16, 2)
    const taken = [pool.take(), pool.take(), pool.take()]
    for (const t of taken) pool.drop(t)
    expect(pool.freeCount).toBe(2)
  })
})
