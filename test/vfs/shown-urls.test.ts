import { describe, expect, it } from 'vitest'
import { withoutQueries, withoutQuery } from '../../src/vfs/shown-urls.js'

describe('addresses as the mount shows them', () => {
  it('lose their query and fragment: token and trackid are the password\'s worth', () => {
    expect(withoutQuery('https://files.test/download/t1/f1?trackid=trk&token=abc')).toBe('https://files.test/download/t1/f1')
    expect(withoutQuery('https://files.test/d/t1#frag')).toBe('https://files.test/d/t1')
    expect(withoutQuery('HTTP://files.test/d/t1?x=1')).toBe('HTTP://files.test/d/t1')
  })

  it('are left alone without a query, and text that is no address is left alone', () => {
    expect(withoutQuery('https://files.test/d/t1')).toBe('https://files.test/d/t1')
    expect(withoutQuery('what? no address')).toBe('what? no address')
    expect(withoutQuery('')).toBe('')
  })

  it('lose it at any depth of a transfer\'s details, nothing else changed', () => {
    const details = {
      id: 't1', subject: 'Why? Because', size: 3, passwordprotected: true, key: null,
      url: 'https://files.test/d/t1?token=abc',
      files: [{ filename: 'a?.txt', downloadurl: 'https://files.test/download/t1/f1?trackid=trk&token=abc', previewurl: null }],
      recipients: [{ email: 'bob@example.org', downloadlink: 'https://files.test/d/t1?trackid=trk-bob' }],
    }
    const shown = withoutQueries(details)
    expect(JSON.stringify(shown)).not.toMatch(/token|trackid=/)
    expect(shown).toEqual({
      ...details,
      url: 'https://files.test/d/t1',
      files: [{ filename: 'a?.txt', downloadurl: 'https://files.test/download/t1/f1', previewurl: null }],
      recipients: [{ email: 'bob@example.org', downloadlink: 'https://files.test/d/t1' }],
    })
  })
})
