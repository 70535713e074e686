// Which arguments hold secrets: --api-key and --password always, --proxy when its URL has a
// password; given as `--flag VALUE` or `--flag=VALUE`; after `--` nothing is a flag. (That
// the process then really shows the masked line is test/mount/secret-arguments.test.ts.)
import { describe, expect, it } from 'vitest'
import { maskSecretArguments, secretWarning } from '../../src/cli/secret-arguments.js'
import { SETTINGS } from '../../src/config/settings.js'

describe('maskSecretArguments', () => {
  it('masks the values of secret flags in both forms, and names their settings', () => {
    const m = maskSecretArguments(['mount', '/m', '--api-key', 'k-123', '--password=tr-pw', '--proxy', 'http://ann:pw@proxy:3128', '--chunk-size', '8M'])
    expect(m.shown).toEqual(['mount', '/m', '--api-key', '********', '--password=********', '--proxy', 'http://ann:********@proxy:3128', '--chunk-size', '8M'])
    expect(m.hidden.map((s) => s.key)).toEqual(['apiKey', 'password', 'proxy'])
  })

  it('leaves a proxy without a password, other flags and what follows -- alone', () => {
    const args = ['inbox', '--proxy', 'http://proxy:3128', '--proxy=http://ann@proxy:3128', '--api-url', 'https://x/api', '--', '--api-key', 'not-a-flag']
    expect(maskSecretArguments(args)).toEqual({ shown: args, hidden: [] })
  })

  it('a flag at the very end, without its value, is left for the parser to refuse', () => {
    expect(maskSecretArguments(['mount', '/m', '--api-key'])).toEqual({ shown: ['mount', '/m', '--api-key'], hidden: [] })
  })
})

describe('secretWarning', () => {
  it('says where the secret goes instead: config set KEY -, the environment, the config file', () => {
    const w = secretWarning(SETTINGS.find((s) => s.key === 'apiKey')!)
    expect(w).toContain('transferfs config set api-key -')
    expect(w).toContain('TRANSFERFS_API_KEY')
    expect(w).toContain('config file')
  })
})
