import { describe, expect, it } from 'vitest'
import { BlockBuffers, SLOTS_AT_ONCE } from '../../src/read/block-buffers.js'
import { recordOf } from '../../src/read/block-slots.js'

describe('block buffers', () => {
  it('a buffer is used again only once every holder has let go', () => {
    const pool = new BlockBuffers(16)
    const first = pool.take()
    first.memory.fill(1)
    const block = pool.seal(first, 10)
    expect(block[0]!.length).toBe(10)
    expect(pool.hold(block)).toBe(true) // the memory cache
    expect(pool.hold(block)).toBe(true) // a read
    pool.release(block) // the fetch
    pool.release(block) // the cache evicts it
    const free = pool.freeCount
    // Still held by the read: a new fetch gets another buffer and the bytes stay.
    const second = pool.take()
    expect(second).not.toBe(first)
    second.memory.fill(2)
    expect(block[0]!.every((b) => b === 1)).toBe(true)
    pool.release(block) // the read gave its bytes back
    expect(pool.freeCount).toBe(free)
    expect(pool.take()).toBe(first)
  })

  it('a block whose buffer went to another block can no longer be held', () => {
    const pool = new BlockBuffers(16)
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
    expect(pool.freeCount).toBe(SLOTS_AT_ONCE - 1)
    pool.release(fresh)
    expect(pool.freeCount).toBe(SLOTS_AT_ONCE)
  })

  it('blocks not from the pool (read from disk) are always there', () => {
    const pool = new BlockBuffers(16)
    const block = [Buffer.alloc(16)]
    expect(pool.hold(block)).toBe(true)
    pool.release(block)
    expect(pool.freeCount).toBe(0)
  })

  it('makes slots a group at a time and keeps every one freed, each with its record page before it', () => {
    const pool = new BlockBuffers(16)
    const taken = Array.from({ length: SLOTS_AT_ONCE + 1 }, () => pool.take())
    expect(pool.madeCount).toBe(2 * SLOTS_AT_ONCE)
    for (const t of taken) expect(recordOf(t.memory, 16)).not.toBeNull()
    for (const t of taken) pool.drop(t)
    expect(pool.freeCount).toBe(2 * SLOTS_AT_ONCE)
    for (let i = 0; i < 2 * SLOTS_AT_ONCE; i++) pool.take()
    expect(pool.madeCount).toBe(2 * SLOTS_AT_ONCE)
  })
})
