// Damaged state files are named by file:line:column and never quoted; counts are checked
// before arithmetic uses them.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parseStateText, StateFileError, stateCount, syntaxFault } from '../../src/base/state-file.js'

function faultOf(text: string): StateFileError {
  try {
    parseStateText(text, '/data/config.json')
  } catch (e) {
    if (e instanceof StateFileError) return e
    throw e
  }
  throw new Error('parsed')
}

describe('parseStateText', () => {
  it('names the line and column of the fault and quotes none of the text', () => {
    const text = '{\n  "apiUrl": "https://example.com/api",\n  "apiKey": local-4a39b7c1d2\n}\n'
    const e = faultOf(text)
    expect(e.message).toBe('/data/config.json:3:13: not valid JSON (unexpected character)')
    for (const piece of ['local', '4a39', 'apiKey', 'example']) expect(e.message).not.toContain(piece)
  })

  it('a truncated file: where its unclosed string starts', () => {
    const e = faultOf(`{"version":1,"pins":[{"label":"inbox/${'x'.repeat(990)}`)
    expect([e.line, e.column]).toEqual([1, 31])
    expect(e.reason).toBe('a string is not closed')
    expect(faultOf('{"a": [1, 2').reason).toBe('the file ends too soon')
  })

  it('places every fault JSON.parse finds, and accepts what it accepts', () => {
    fc.assert(fc.property(fc.json(), fc.nat(), fc.string({ maxLength: 3 }), (json, at, junk) => {
      const cut = at % (json.length + 1)
      const text = json.slice(0, cut) + junk + json.slice(cut)
      let ok = true
      try {
        JSON.parse(text)
      } catch {
        ok = false
      }
      // The scanner accepts what JSON.parse accepts (its fallback answer), and faults the rest.
      if (ok) return void expect(syntaxFault(text).reason).toBe('not JSON')
      const { offset } = syntaxFault(text)
      expect(offset).toBeGreaterThanOrEqual(0)
      expect(offset).toBeLessThanOrEqual(text.length)
      expect(syntaxFault(text).reason).not.toBe('not JSON')
    }), { numRuns: 500 })
  })
})

describe('stateCount', () => {
  it('takes whole numbers in range and nothing else', () => {
    expect(stateCount(0)).toBe(0)
    expect(stateCount(12345)).toBe(12345)
    for (const bad of [NaN, -1, 1.5, Infinity, '12', null, undefined, 2 ** 60]) expect(stateCount(bad)).toBeNull()
    expect(stateCount(11, 10)).toBeNull()
  })
})
