// The memory cache's eviction order: blocks a sequential reader went past go first, then
// the least recently used; a block that arrived early (a parallel prefetch) outlives them.
import { describe, expect, it } from 'vitest'
import { MemoryBlockCache } from '../../src/read/memory-cache.js'

const block = (n: number) => [Buffer.alloc(n)]

describe('MemoryBlockCache', () => {
  it('evicts what a sequential reader has read before an unread block that arrived earlier', () => {
    const c = new MemoryBlockCache(4 * 100)
    c.set('ahead', block(100)) // a prefetch finished out of order
    c.set('a', block(100))
    c.set('b', block(100))
    c.get('a', false)
    c.get('b', false)
    c.set('c', block(100))
    c.set('d', block(100)) // over budget: the read 'a' goes, not 'ahead'
    expect(c.has('ahead')).toBe(true)
    expect(c.has('a')).toBe(false)
    c.set('e', block(100))
    expect(c.has('b')).toBe(false)
    expect(c.has('ahead')).toBe(true)
    expect(c.bytes).toBe(400)
  })

  it('otherwise least recently used first; a touched block becomes the most recent', () => {
    const c = new MemoryBlockCache(300)
    c.set('x', block(100))
    c.set('y', block(100))
    c.set('z', block(100))
    c.get('x')
    c.set('w', block(100))
    expect([...['x', 'y', 'z', 'w']].filter((k) => c.has(k))).toEqual(['x', 'z', 'w'])
    c.set('z', block(50))
    expect(c.bytes).toBe(250)
    c.set('huge', block(301))
    expect(c.has('huge')).toBe(false)
    expect(c.count).toBe(3)
  })

  it('keeps only the last consumedMaxBytes of blocks read sequentially, never the one just read, and counts them right when read again', () => {
    const c = new MemoryBlockCache(10 * 100, null, 2 * 100)
    for (const k of ['a', 'b', 'c', 'd']) c.set(k, block(100))
    c.get('a', false)
    c.get('b', false)
    expect(c.count).toBe(4)
    c.get('c', false) // a third read block: the first read goes at once, though the budget has room
    expect(c.has('a')).toBe(false)
    expect([...['b', 'c', 'd']].every((k) => c.has(k))).toBe(true)
    c.get('b') // a random reader takes 'b' back: it is fresh again, out of the read blocks' count
    c.get('d', false)
    expect([...['b', 'c', 'd']].every((k) => c.has(k))).toBe(true)
    expect(c.bytes).toBe(300)
    const big = new MemoryBlockCache(1000, null, 50)
    big.set('x', block(100))
    expect(big.get('x', false)).toBeDefined()
    expect(big.has('x')).toBe(true)
  })
})
