// The pure parts of the output conventions: colours, tables, dates, exit codes, safe names.
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { IntegrityError, NetworkError, NotSignedInError, ServiceError } from '../../src/api/errors.js'
import { SettingsError } from '../../src/config/index.js'
import { outputPaths } from '../../src/cli/download.js'
import { spansOf } from '../../src/base/chunk-grid.js'
import { EXIT, exitCodeOf, UsageError } from '../../src/cli/output/exit-codes.js'
import { parseSince } from '../../src/cli/output/format.js'
import { colorEnabled, makeStyle } from '../../src/cli/output/style.js'
import { renderFields, renderTable } from '../../src/cli/output/table.js'
import { fileValue, findSetting } from '../../src/cli/config.js'

describe('colours', () => {
  it('only on a terminal, never with NO_COLOR or TERM=dumb, always with FORCE_COLOR', () => {
    expect(colorEnabled({ isTTY: true, env: {} })).toBe(true)
    expect(colorEnabled({ isTTY: false, env: {} })).toBe(false)
    expect(colorEnabled({ isTTY: true, env: { NO_COLOR: '1' } })).toBe(false)
    expect(colorEnabled({ isTTY: true, env: { TERM: 'dumb' } })).toBe(false)
    expect(colorEnabled({ isTTY: false, env: { FORCE_COLOR: '1' } })).toBe(true)
    expect(colorEnabled({ isTTY: true, env: { NO_COLOR: '1', FORCE_COLOR: '1' } })).toBe(false)
    expect(makeStyle(false).red('x')).toBe('x')
    expect(makeStyle(true).red('x')).toBe('\u001b[31mx\u001b[39m')
  })
})

describe('tables', () => {
  const style = makeStyle(false)
  const rows = [{ a: 'one', n: 5 }, { a: 'a much longer name', n: 12345 }]
  const cols = [
    { header: 'NAME', value: (r: (typeof rows)[number]) => r.a, shrink: true },
    { header: 'N', value: (r: (typeof rows)[number]) => String(r.n), align: 'right' as const },
  ]

  it('pads columns and right-aligns numbers', () => {
    expect(renderTable(cols, rows, style)).toBe(
      'NAME                    N\n' +
      'one                     5\n' +
      'a much longer name  12345\n')
  })

  it('shrinks a shrinkable column to fit the width, marking the cut', () => {
    const lines = renderTable(cols, rows, style, 20).trimEnd().split('\n')
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(20)
    expect(lines[2]).toContain('…')
  })

  it('keeps control characters from the service out of the rows, shown as escapes', () => {
    const out = renderTable([{ header: 'S', value: (r: string) => r }], ['evil\nrow\u001b[2J'], style)
    expect(out.split('\n')).toHaveLength(3)
    expect(out).not.toContain('\u001b')
    expect(out).toContain('evil\\nrow\\x1b[2J')
  })

  it('shows a field\'s value as text: one line, the escape sequence spelled out', () => {
    expect(renderFields([['Subject', 'Hi\u001b]0;owned\u0007\nForged: yes']], style)).toBe('Subject: Hi\\x1b]0;owned\\x07\\nForged: yes\n')
  })
})

describe('formats', () => {
  it('--since takes dates and ages, and refuses anything else as a usage error', () => {
    const now = Date.UTC(2026, 0, 31, 12)
    expect(parseSince('7d', now)).toBe(now - 7 * 86_400_000)
    expect(parseSince('12h', now)).toBe(now - 12 * 3_600_000)
    expect(parseSince('2026-01-01', now)).toBe(new Date(2026, 0, 1).getTime())
    expect(parseSince('2026-01-01T08:30Z', now)).toBe(Date.UTC(2026, 0, 1, 8, 30))
    expect(() => parseSince('yesterday', now)).toThrow(UsageError)
    expect(() => parseSince('2026-02-30', now)).toThrow(UsageError)
  })
})

describe('exit codes', () => {
  it('one code per kind of failure', () => {
    expect(exitCodeOf(new UsageError('x'))).toBe(EXIT.usage)
    expect(exitCodeOf(new SettingsError('x'))).toBe(EXIT.usage)
    expect(exitCodeOf(new NotSignedInError())).toBe(EXIT.auth)
    expect(exitCodeOf(new ServiceError('x', 401, 'RefreshTokenExpired'))).toBe(EXIT.auth)
    expect(exitCodeOf(new ServiceError('x', 401, 'PasswordRequired'))).toBe(EXIT.auth)
    expect(exitCodeOf(new ServiceError('x', 404, 'NotFound'))).toBe(EXIT.notFound)
    expect(exitCodeOf(new ServiceError('x', 409, 'TransferExpired'))).toBe(EXIT.notFound)
    expect(exitCodeOf(new ServiceError('x', 503, 'ServiceInterruption'))).toBe(EXIT.unreachable)
    expect(exitCodeOf(new NetworkError('x', 'ECONNREFUSED'))).toBe(EXIT.unreachable)
    expect(exitCodeOf(new ServiceError('x', 400, 'InvalidEmail'))).toBe(EXIT.error)
    expect(exitCodeOf(new IntegrityError('x', 'a', 'b'))).toBe(EXIT.error)
    expect(exitCodeOf(Object.assign(new Error('x'), { name: 'AbortError' }))).toBe(EXIT.interrupted)
  })
})

describe('download names', () => {
  it('never leave the output folder, whatever the service calls a file', () => {
    const dir = '/out'
    const paths = outputPaths(dir, ['../../etc/passwd', '/abs/x', 'a/../../b', '..', '', 'ok/sub/f.txt', 'dup.txt', 'dup.txt', 'nl\nname'])
    for (const p of paths) expect(p.startsWith('/out/')).toBe(true)
    expect(paths[5]).toBe('/out/ok/sub/f.txt')
    expect(paths[6]).toBe('/out/dup.txt')
    expect(paths[7]).toBe('/out/dup (2).txt')
    expect(paths[8]).toBe('/out/nl\u240aname')
    expect(new Set(paths).size).toBe(paths.length)
  })

  it('number 10,000 names alike in their first 300 bytes in one pass, each folder apart', () => {
    const long = 'x'.repeat(300)
    const names = [...Array.from({ length: 10_000 }, (_, i) => `${long}-${i}.bin`), 'a/f.txt', 'b/f.txt', 'a/f.txt']
    const started = performance.now()
    const paths = outputPaths('/out', names)
    // Numbered one by one from " (2)" as before, 10,000 such names took minutes; now well under one.
    expect(performance.now() - started).toBeLessThan(10_000)
    expect(new Set(paths).size).toBe(paths.length)
    for (const p of paths) expect(Buffer.byteLength(path.basename(p))).toBeLessThanOrEqual(255)
    expect(paths.slice(-3)).toEqual(['/out/a/f.txt', '/out/b/f.txt', '/out/a/f (2).txt'])
  })

  it('chunks cover the file exactly, the last one shorter', () => {
    expect(spansOf(10, 4).length).toBe(3)
    expect(spansOf(10, 4)).toEqual([{ start: 0, end: 4 }, { start: 4, end: 8 }, { start: 8, end: 10 }])
  })
})

describe('config keys and values', () => {
  it('a setting by key, flag or variable name; values checked and kept as written', () => {
    expect(findSetting('apiUrl').key).toBe('apiUrl')
    expect(findSetting('api-url').key).toBe('apiUrl')
    expect(findSetting('--chunk-size').key).toBe('chunkSize')
    expect(findSetting('TRANSFERFS_LISTING_TTL_MS').key).toBe('listingTtlMs')
    expect(() => findSetting('nope')).toThrow(UsageError)
    expect(fileValue(findSetting('chunkSize'), '16M')).toBe('16M')
    expect(fileValue(findSetting('chunkSize'), '1024')).toBe(1024)
    expect(fileValue(findSetting('days'), '7')).toBe(7)
    expect(fileValue(findSetting('notify'), 'yes')).toBe(true)
    expect(() => fileValue(findSetting('days'), 'seven')).toThrow(SettingsError)
  })
})
