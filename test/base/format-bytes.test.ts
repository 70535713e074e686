// Sizes as every command, status text and message shows them.
import { describe, expect, it } from 'vitest'
import { formatBytes } from '../../src/base/format-bytes.js'

const KiB = 1024
const MiB = 1024 * KiB
const GiB = 1024 * MiB

describe('formatBytes', () => {
  it('bytes below a KiB as they are', () => {
    expect(formatBytes(0)).toBe('0 B')
    expect(formatBytes(512)).toBe('512 B')
  })

  it('binary units, one decimal at most, none for a whole number', () => {
    expect(formatBytes(1536)).toBe('1.5 KiB')
    expect(formatBytes(2 * KiB)).toBe('2 KiB')
    expect(formatBytes(50 * MiB)).toBe('50 MiB')
    expect(formatBytes(10 * GiB)).toBe('10 GiB')
    expect(formatBytes(1.25 * GiB)).toBe('1.3 GiB')
    expect(formatBytes(12.34 * GiB)).toBe('12.3 GiB')
    expect(formatBytes(3 * 1024 * 1024 * GiB)).toBe('3 PiB')
  })

  it('"-" for a size not known', () => {
    expect(formatBytes(null)).toBe('-')
    expect(formatBytes(undefined)).toBe('-')
    expect(formatBytes(-1)).toBe('-')
    expect(formatBytes(Number.NaN)).toBe('-')
  })
})
