// An answer's body on its way to its sink (range-body.ts): never more than its length, in
// order while the sink holds the stream back, and the sink's room never past the length.
import { describe, expect, it } from 'vitest'
import { NetworkError } from '../../src/api/errors.js'
import { BodyStream, type BodyOwner, type BodySink } from '../../src/api/range-body.js'

/** An exchange that records how the body ended and how often the socket was let read again. */
function owner(): BodyOwner & { ends: Array<Error | null>; resumes: number } {
  const o = {
    over: false,
    ends: [] as Array<Error | null>,
    resumes: 0,
    finish(error: Error | null) {
      if (o.over) return
      o.over = true
      o.ends.push(error)
    },
    resume() {
      o.resumes++
    },
  }
  return o
}

const tick = () => new Promise((resolve) => setImmediate(resolve))

describe('a body stream', () => {
  it('hands on every byte and ends complete at its length', () => {
    const got: string[] = []
    const end = owner()
    const body = new BodyStream((bytes) => void got.push(bytes.toString()), 6, 'https://files.example', end)
    expect(body.take(Buffer.from('abc'))).toBe(true)
    expect(end.ends).toEqual([])
    expect(body.take(Buffer.from('def'))).toBe(true)
    expect(got).toEqual(['abc', 'def'])
    expect(end.ends).toEqual([null])
  })

  it('fails with a protocol error on bytes past its length, handing none of them on', () => {
    const got: string[] = []
    const end = owner()
    const body = new BodyStream((bytes) => void got.push(bytes.toString()), 4, 'https://files.example', end)
    expect(body.take(Buffer.from('abcde'))).toBe(false)
    expect(got).toEqual([])
    expect(end.ends[0]).toBeInstanceOf(NetworkError)
    expect((end.ends[0] as NetworkError).systemCode).toBe('EPROTO')
  })

  it('while the sink\'s promise is pending, copies what comes aside and hands it on in order after, then lets the socket read', async () => {
    const got: string[] = []
    let release = () => {}
    const sink: BodySink = (bytes) => {
      got.push(bytes.toString())
      if (got.length === 1) return new Promise<void>((resolve) => (release = resolve))
    }
    const end = owner()
    const body = new BodyStream(sink, 9, 'https://files.example', end)
    const shared = Buffer.from('abc')
    expect(body.take(shared)).toBe(false)
    shared.write('def')
    expect(body.take(shared)).toBe(false)
    // The read buffer is used again: what was held must have been copied.
    shared.write('xyz')
    expect(body.room()).toBeUndefined()
    release()
    await tick()
    expect(got).toEqual(['abc', 'def'])
    expect(end.resumes).toBe(1)
    expect(body.take(Buffer.from('ghi'))).toBe(true)
    expect(got).toEqual(['abc', 'def', 'ghi'])
    expect(end.ends).toEqual([null])
  })

  it('names the sink\'s room only up to the bytes still to come', () => {
    const memory = Buffer.alloc(16)
    const sink: BodySink = Object.assign(() => {}, { room: () => memory })
    const body = new BodyStream(sink, 10, 'https://files.example', owner())
    expect(body.room()?.length).toBe(10)
    body.take(memory.subarray(0, 4))
    expect(body.room()?.length).toBe(6)
  })
})
