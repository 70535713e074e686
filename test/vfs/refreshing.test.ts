import { describe, expect, it } from 'vitest'
import { FsError } from '../../src/vfs/core.js'
import { HandleTable } from '../../src/vfs/handles.js'
import { Refreshing } from '../../src/vfs/refreshing.js'
import { FakeClock } from './fakes.js'

function counter(values: Array<number | Error>) {
  let calls = 0
  const pending: Array<() => void> = []
  const load = () => new Promise<number>((resolve, reject) => {
    const value = values[Math.min(calls, values.length - 1)]!
    calls++
    pending.push(() => (value instanceof Error ? reject(value) : resolve(value)))
  })
  return { load, calls: () => calls, settle: () => pending.splice(0).forEach((run) => run()) }
}

describe('Refreshing (stale-while-revalidate)', () => {
  const policy = (clock: FakeClock) => ({ clock, ttlMs: 1000, failureBackoffMs: 200 })

  it('concurrent first loads share one call', async () => {
    const clock = new FakeClock()
    const source = counter([1])
    const cached = new Refreshing(source.load, policy(clock))
    const all = Promise.all([cached.get(), cached.get(), cached.get()])
    source.settle()
    expect(await all).toEqual([1, 1, 1])
    expect(source.calls()).toBe(1)
  })

  it('a stale value is served at once while one refresh runs; its result is served after', async () => {
    const clock = new FakeClock()
    const source = counter([1, 2])
    const cached = new Refreshing(source.load, policy(clock))
    const first = cached.get()
    source.settle()
    await first
    clock.advance(1000)
    expect(await cached.get()).toBe(1)
    expect(await cached.get()).toBe(1)
    expect(source.calls()).toBe(2)
    source.settle()
    await new Promise((resolve) => setImmediate(resolve))
    expect(await cached.get()).toBe(2)
    expect(source.calls()).toBe(2)
  })

  it('a failed refresh keeps the value and waits another TTL; a failed first load is answered again only within the backoff', async () => {
    const clock = new FakeClock()
    const source = counter([1, new Error('offline'), 3])
    const errors: unknown[] = []
    const cached = new Refreshing(source.load, { ...policy(clock), onError: (e) => errors.push(e) })
    const first = cached.get()
    source.settle()
    await first
    clock.advance(1000)
    expect(await cached.get()).toBe(1)
    source.settle()
    await new Promise((resolve) => setImmediate(resolve))
    expect(errors).toHaveLength(1)
    expect(await cached.get()).toBe(1)
    expect(source.calls()).toBe(2)

    const never = new Refreshing(counter([new Error('down')]).load, policy(clock))
    const failing = counter([new Error('down'), 7])
    const lazy = new Refreshing(failing.load, policy(clock))
    const attempt = lazy.get()
    failing.settle()
    await expect(attempt).rejects.toThrow('down')
    await expect(lazy.get()).rejects.toThrow('down')
    expect(failing.calls()).toBe(1)
    clock.advance(200)
    const retry = lazy.get()
    failing.settle()
    expect(await retry).toBe(7)
    expect(never.peek()).toBeUndefined()
  })
})

describe('HandleTable', () => {
  it('gives distinct numbers, EBADF for unknown ones, and does not reuse a just-released number', () => {
    const table = new HandleTable<string>()
    const a = table.add('a')
    const b = table.add('b')
    expect(a).toBeGreaterThan(0)
    expect(b).not.toBe(a)
    expect(table.remove(a)).toBe('a')
    expect(() => table.get(a)).toThrow(FsError)
    const c = table.add('c')
    expect(c).not.toBe(a)
    expect(table.get(b)).toBe('b')
    expect(table.size).toBe(2)
  })
})
