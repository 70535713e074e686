import { execFile } from 'node:child_process'
import { createReadStream, createWriteStream } from 'node:fs'
import { mkdtemp, mkdir, open, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { promisify } from 'node:util'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { crc32, safeZipNames, zipLayout, zipStream, type ZipEntry, type ZipLayout } from '../../src/emulator/zip.js'

const run = promisify(execFile)
const GiB = 1024 ** 3

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'zip-test-'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

/** Deterministic content of the given length, different for each seed. */
function content(length: number, seed: number): Buffer {
  const buf = Buffer.alloc(length)
  let x = (seed * 2654435761 + 1) >>> 0 || 1
  for (let i = 0; i < length; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    buf[i] = x & 0xff
  }
  return buf
}

function entriesOf(files: Array<{ name: string; data: Buffer; mtime?: Date }>): ZipEntry[] {
  return files.map((f) => ({
    name: f.name,
    size: f.data.length,
    crc32: crc32(f.data),
    mtime: f.mtime ?? new Date(2024, 4, 17, 13, 45, 30),
  }))
}

/** The archive bytes of [start, end) built from segments over in-memory contents. */
function materialize(layout: ZipLayout, datas: Buffer[], start = 0, end = layout.size): Buffer {
  const pieces: Buffer[] = []
  for (const s of layout.segments(start, end)) {
    pieces.push(s.kind === 'bytes' ? s.data : datas[s.index]!.subarray(s.start, s.end))
  }
  return Buffer.concat(pieces)
}

/** Writes the archive to a file, streaming each entry's range from its file on disk. */
async function writeArchive(layout: ZipLayout, paths: string[], target: string): Promise<void> {
  const stream = zipStream(layout, (index, start, end) =>
    end > start ? createReadStream(paths[index]!, { start, end: end - 1 }) : (async function* () {})(),
  )
  await pipeline(stream, createWriteStream(target))
}

describe('zipLayout: archives that unzip accepts', () => {
  const files = [
    { name: 'report.txt', data: Buffer.from('Quarterly numbers\n'.repeat(100)) },
    { name: 'data/raw.csv', data: Buffer.from('a,b,c\n1,2,3\n') },
    { name: 'data/nested/deeper/blob.bin', data: content(300_000, 7) },
    { name: 'empty.txt', data: Buffer.alloc(0) },
    { name: 'Café 日本 🎉.txt', data: Buffer.from('unicode name\n') },
  ]

  it('passes unzip -t, lists every entry with its size, extracts identical bytes', async () => {
    const src = join(dir, 'src')
    const paths: string[] = []
    for (const f of files) {
      const p = join(src, f.name)
      await mkdir(dirname(p), { recursive: true })
      await writeFile(p, f.data)
      paths.push(p)
    }
    const layout = zipLayout(entriesOf(files))
    const archive = join(dir, 'a.zip')
    await writeArchive(layout, paths, archive)
    expect((await readFile(archive)).length).toBe(layout.size)

    const test = await run('unzip', ['-t', archive])
    expect(test.stdout).toContain('No errors detected')

    const list = await run('unzip', ['-l', archive])
    for (const f of files) {
      expect(list.stdout).toMatch(new RegExp(`^\\s*${f.data.length}\\s+2024-05-17 13:45\\s+${escape(f.name)}$`, 'm'))
    }

    const out = join(dir, 'out')
    await run('unzip', ['-q', archive, '-d', out])
    for (const f of files) expect((await readFile(join(out, f.name))).equals(f.data)).toBe(true)
  })

  it('is read the same by an independent reader (python zipfile), names as UTF-8', async () => {
    const layout = zipLayout(entriesOf(files))
    const archive = join(dir, 'py.zip')
    await writeFile(archive, materialize(layout, files.map((f) => f.data)))
    const script = [
      'import sys, zipfile, json',
      'z = zipfile.ZipFile(sys.argv[1])',
      'assert z.testzip() is None',
      'print(json.dumps([[i.filename, i.file_size, i.compress_type, i.flag_bits & 0x800] for i in z.infolist()]))',
    ].join('\n')
    const { stdout } = await run('python3', ['-c', script, archive])
    expect(JSON.parse(stdout)).toEqual(files.map((f) => [f.name, f.data.length, 0, 0x800]))
  })

  it('an empty transfer is a valid empty archive', async () => {
    const layout = zipLayout([])
    expect(layout.size).toBe(22)
    const archive = join(dir, 'empty.zip')
    await writeFile(archive, materialize(layout, []))
    const { stdout } = await run('python3', ['-c', 'import sys,zipfile; print(len(zipfile.ZipFile(sys.argv[1]).infolist()))', archive])
    expect(stdout.trim()).toBe('0')
  })

  it('detects content that is not the declared size', async () => {
    const layout = zipLayout([{ name: 'a', size: 10, crc32: 0, mtime: new Date() }])
    const short = zipStream(layout, async function* () {
      yield Buffer.alloc(4)
    })
    await expect(pipeline(short, createWriteStream(join(dir, 'short.zip')))).rejects.toThrow(/shorter/)
  })

  it('rejects bad entries and bad ranges', () => {
    expect(() => zipLayout([{ name: '', size: 1, crc32: 0, mtime: new Date() }])).toThrow(RangeError)
    expect(() => zipLayout([{ name: 'a', size: -1, crc32: 0, mtime: new Date() }])).toThrow(RangeError)
    const layout = zipLayout(entriesOf(files))
    expect(() => [...layout.segments(0, layout.size + 1)]).toThrow(RangeError)
    expect(() => [...layout.segments(5, 4)]).toThrow(RangeError)
    expect([...layout.segments(layout.size, layout.size)]).toEqual([])
  })
})

describe('safeZipNames', () => {
  it('keeps folders, drops what would leave the folder, and separates names that end up equal', () => {
    expect(safeZipNames(['data/raw.csv', '../escape.txt', 'notes/../../etc/passwd', '..', '/abs/x', 'a\\b.txt', 'escape.txt', 'escape (2).txt']))
      .toEqual(['data/raw.csv', 'escape.txt', 'notes/etc/passwd', '_', 'abs/x', 'a/b.txt', 'escape (2).txt', 'escape (2) (2).txt'])
  })

  it('an archive of hostile names extracts inside its folder with every file', async () => {
    const names = ['../escape.txt', 'notes/../../etc/passwd', '..', 'escape.txt', '.hidden', 'x/./y']
    const datas = names.map((_, i) => content(100 + i, i))
    const safe = safeZipNames(names)
    const layout = zipLayout(entriesOf(safe.map((name, i) => ({ name, data: datas[i]! }))))
    const archive = join(dir, 'hostile.zip')
    await writeFile(archive, materialize(layout, datas))
    const out = join(dir, 'hostile', 'inside')
    await mkdir(out, { recursive: true })
    const { stderr } = await run('unzip', ['-q', archive, '-d', out])
    expect(stderr).toBe('')
    for (const [i, name] of safe.entries()) expect((await readFile(join(out, name))).equals(datas[i]!)).toBe(true)
  })
})

describe('zipLayout: ranges', () => {
  it('every range [start, end) of segments equals the same slice of the whole archive', () => {
    const fileArb = fc.record({
      name: fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' }),
      length: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 5000 })),
      seed: fc.nat(),
    })
    fc.assert(
      fc.property(
        fc.array(fileArb, { maxLength: 8 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (specs, a, b) => {
          const datas = specs.map((s) => content(s.length, s.seed))
          const layout = zipLayout(entriesOf(specs.map((s, i) => ({ name: s.name, data: datas[i]! }))))
          const whole = materialize(layout, datas)
          expect(whole.length).toBe(layout.size)
          const start = Math.floor(Math.min(a, b) * layout.size)
          const end = Math.floor(Math.max(a, b) * layout.size)
          const segments = [...layout.segments(start, end)]
          for (const s of segments) {
            expect(s.kind === 'bytes' ? s.data.length : s.end - s.start).toBeGreaterThan(0)
          }
          expect(materialize(layout, datas, start, end).equals(whole.subarray(start, end))).toBe(true)
        },
      ),
      { numRuns: 300 },
    )
  })

  it('a ranged stream equals the slice of the whole', async () => {
    const datas = [content(70_000, 1), content(5, 2), content(123_456, 3)]
    const layout = zipLayout(entriesOf(datas.map((data, i) => ({ name: `f${i}.bin`, data }))))
    const whole = materialize(layout, datas)
    for (const [start, end] of [[0, layout.size], [10, 70_100], [70_050, layout.size - 3], [layout.size - 1, layout.size]] as const) {
      const chunks: Buffer[] = []
      for await (const c of zipStream(layout, async function* (i, s, e) { yield datas[i]!.subarray(s, e) }, start, end)) {
        chunks.push(c as Buffer)
      }
      expect(Buffer.concat(chunks).equals(whole.subarray(start, end))).toBe(true)
    }
  })
})

describe('zipLayout: ZIP64', () => {
  it('a 5 GiB entry gets ZIP64 sizes in both headers, the next entry a ZIP64 offset, and ZIP64 end records', () => {
    const big = 5 * GiB
    const layout = zipLayout([
      { name: 'big.bin', size: big, crc32: 0x12345678, mtime: new Date(2024, 0, 1) },
      { name: 'after.txt', size: 3, crc32: 1, mtime: new Date(2024, 0, 1) },
    ])
    const local = Buffer.concat(headerBytes(layout, 0, 200))
    expect(local.readUInt32LE(0)).toBe(0x04034b50)
    expect(local.readUInt16LE(4)).toBe(45)
    expect(local.readUInt32LE(18)).toBe(0xffffffff)
    expect(local.readUInt32LE(22)).toBe(0xffffffff)
    const extraAt = 30 + local.readUInt16LE(26)
    expect(local.readUInt16LE(extraAt)).toBe(0x0001)
    expect(local.readUInt16LE(extraAt + 2)).toBe(16)
    expect(Number(local.readBigUInt64LE(extraAt + 4))).toBe(big)
    expect(Number(local.readBigUInt64LE(extraAt + 12))).toBe(big)

    const secondLocal = layout.localHeaderOffset(1)
    expect(secondLocal).toBeGreaterThan(0xffffffff)

    const cd = parseCentral(layout)
    expect(cd.zip64End).toBeDefined()
    expect(cd.zip64End!.count).toBe(2)
    expect(cd.entries[0]).toMatchObject({ name: 'big.bin', size: big, offset: 0, version: 45 })
    expect(cd.entries[1]).toMatchObject({ name: 'after.txt', size: 3, offset: secondLocal, version: 45 })
    expect(cd.entries[0]!.crc).toBe(0x12345678)
  })

  it('small archives carry no ZIP64 records', () => {
    const layout = zipLayout([{ name: 'a.txt', size: 3, crc32: 1, mtime: new Date() }])
    const cd = parseCentral(layout)
    expect(cd.zip64End).toBeUndefined()
    expect(cd.entries[0]).toMatchObject({ version: 20, size: 3, offset: 0 })
  })

  it('more than 65535 entries: ZIP64 end records, unzip lists them all', async () => {
    const count = 70_000
    const entries: ZipEntry[] = []
    for (let i = 0; i < count; i++) entries.push({ name: `d${i % 7}/f${i}`, size: 0, crc32: 0, mtime: new Date(2024, 0, 1) })
    const layout = zipLayout(entries)
    const cd = parseCentral(layout)
    expect(cd.zip64End!.count).toBe(count)
    expect(cd.entries.length).toBe(count)
    const archive = join(dir, 'many.zip')
    await writeFile(archive, materialize(layout, []))
    const { stdout } = await run('unzip', ['-tq', archive])
    expect(stdout).toContain('No errors detected')
    const { stdout: list } = await run('unzip', ['-l', archive], { maxBuffer: 64 * 1024 * 1024 })
    expect(list).toMatch(new RegExp(`^\\s*0\\s+${count} files$`, 'm'))
  })

  it('a real archive past 4 GiB (sparse, mostly holes) is read by unzip and python zipfile', async () => {
    // An entry of 4 GiB + 1 zero bytes: its size, the archive and the next entry's offset all need
    // ZIP64. Testing every byte of it takes ~20 s, so the readers check the tail entry (found
    // through the ZIP64 offset and end records), the listing, and the big entry's local header.
    const bigSize = 4 * GiB + 1
    const zerosCrc = 0x41d912ff // CRC-32 of 4 GiB + 1 zero bytes
    const tail = Buffer.from('after the big one\n')
    const layout = zipLayout([
      { name: 'zeros.bin', size: bigSize, crc32: zerosCrc, mtime: new Date(2024, 0, 1) },
      { name: 'tail.txt', size: tail.length, crc32: crc32(tail), mtime: new Date(2024, 0, 1) },
    ])
    const archive = join(dir, 'big.zip')
    const fh = await open(archive, 'w')
    try {
      let at = 0
      for (const s of layout.segments()) {
        if (s.kind === 'bytes') await fh.write(s.data, 0, s.data.length, at)
        else if (s.index === 1) await fh.write(tail, s.start, s.end - s.start, at)
        at += s.kind === 'bytes' ? s.data.length : s.end - s.start
      }
      await fh.truncate(layout.size)
    } finally {
      await fh.close()
    }
    const { stdout } = await run('unzip', ['-t', archive, 'tail.txt'])
    expect(stdout).toMatch(/testing: tail\.txt\s+OK/)
    expect(stdout).toContain('No errors detected')
    const { stdout: tailOut } = await run('unzip', ['-p', archive, 'tail.txt'])
    expect(tailOut).toBe(tail.toString())
    const { stdout: list } = await run('unzip', ['-l', archive])
    expect(list).toMatch(/^\s*4294967297\s+.*zeros\.bin$/m)
    const script = [
      'import sys, zipfile',
      'z = zipfile.ZipFile(sys.argv[1])',
      'i = z.getinfo("zeros.bin")',
      'f = z.open(i)',
      'head = f.read(1 << 20)',
      'print(i.file_size, i.header_offset, len(head), head.count(0), z.getinfo("tail.txt").header_offset)',
    ].join('\n')
    const { stdout: py } = await run('python3', ['-c', script, archive])
    expect(py.trim()).toBe(`${bigSize} 0 ${1 << 20} ${1 << 20} ${layout.localHeaderOffset(1)}`)
  })
})

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** The header bytes among the first `length` bytes of the archive. */
function headerBytes(layout: ZipLayout, start: number, length: number): Buffer[] {
  const out: Buffer[] = []
  for (const s of layout.segments(start, start + length)) {
    if (s.kind !== 'bytes') break
    out.push(s.data)
  }
  return out
}

interface CentralEntry { name: string; size: number; offset: number; version: number; crc: number }

/** A minimal reader of the archive's end records and central directory, used to check the layout. */
function parseCentral(layout: ZipLayout): { entries: CentralEntry[]; zip64End?: { count: number } } {
  const segments = [...layout.segments()]
  const last = segments[segments.length - 1]!
  if (last.kind !== 'bytes') throw new Error('archive does not end with bytes')
  const trailer = last.data
  const trailerStart = layout.size - trailer.length
  const end = trailer.subarray(trailer.length - 22)
  expect(end.readUInt32LE(0)).toBe(0x06054b50)
  let count = end.readUInt16LE(10)
  let cdSize = end.readUInt32LE(12)
  let cdOffset = end.readUInt32LE(16)
  let zip64End: { count: number } | undefined
  if (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) {
    const locator = trailer.subarray(trailer.length - 42, trailer.length - 22)
    expect(locator.readUInt32LE(0)).toBe(0x07064b50)
    const z = trailer.subarray(Number(locator.readBigUInt64LE(8)) - trailerStart)
    expect(z.readUInt32LE(0)).toBe(0x06064b50)
    count = Number(z.readBigUInt64LE(32))
    cdSize = Number(z.readBigUInt64LE(40))
    cdOffset = Number(z.readBigUInt64LE(48))
    zip64End = { count }
  }
  expect(cdOffset).toBe(trailerStart)
  const cd = trailer.subarray(0, cdSize)
  const entries: CentralEntry[] = []
  let p = 0
  for (let i = 0; i < count; i++) {
    expect(cd.readUInt32LE(p)).toBe(0x02014b50)
    const nameLen = cd.readUInt16LE(p + 28)
    const extraLen = cd.readUInt16LE(p + 30)
    const commentLen = cd.readUInt16LE(p + 32)
    let size = cd.readUInt32LE(p + 24)
    let offset = cd.readUInt32LE(p + 42)
    const extra = cd.subarray(p + 46 + nameLen, p + 46 + nameLen + extraLen)
    for (let e = 0; e < extra.length; ) {
      const id = extra.readUInt16LE(e)
      const len = extra.readUInt16LE(e + 2)
      if (id === 1) {
        let q = e + 4
        if (size === 0xffffffff) { size = Number(extra.readBigUInt64LE(q)); q += 16 }
        if (offset === 0xffffffff) offset = Number(extra.readBigUInt64LE(q))
      }
      e += 4 + len
    }
    entries.push({
      name: cd.toString('utf8', p + 46, p + 46 + nameLen),
      size,
      offset,
      version: cd.readUInt16LE(p + 6),
      crc: cd.readUInt32LE(p + 16),
    })
    p += 46 + nameLen + extraLen + commentLen
  }
  return { entries, ...(zip64End ? { zip64End } : {}) }
}
