import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { markupText, plainText } from '../../src/base/shown-text.js'

describe('plainText', () => {
  it('shows a newline, an escape sequence and a backslash as visible escapes', () => {
    expect(plainText('a\nb')).toBe('a\\nb')
    expect(plainText('\x1b]0;owned\x07title')).toBe('\\x1b]0;owned\\x07title')
    expect(plainText('C:\\dir')).toBe('C:\\\\dir')
    expect(plainText('\u009b31m')).toBe('\\x9b31m')
    expect(plainText('abc\u202Etxt.exe')).toBe('abc\\u{202e}txt.exe')
  })

  it('leaves ordinary text of any language as it is', () => {
    expect(plainText('Quarterly report – Ünïcødé 報告 📄')).toBe('Quarterly report – Ünïcødé 報告 📄')
  })

  it('never lets a control character through, and tells different texts apart', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (a, b) => {
        expect(plainText(a)).not.toMatch(/[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/)
        if (a !== b) expect(plainText(a)).not.toBe(plainText(b))
      }),
    )
  })
})

describe('markupText', () => {
  it('escapes what a notification daemon would read as markup', () => {
    expect(markupText('<b>urgent</b> & "now"\n')).toBe('&lt;b&gt;urgent&lt;/b&gt; &amp; "now"\\n')
  })
})
