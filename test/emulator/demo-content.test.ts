import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { inflateSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_PASSWORD, demoTransfers, fixturePath, largeFileStream, type DemoFile, type DemoTransfer } from '../../src/emulator/demo-content.js'
import { crc32 } from '../../src/emulator/zip.js'

const run = promisify(execFile)
const repoRoot = new URL('../../', import.meta.url)

let dir: string
let transfers: DemoTransfer[]
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'demo-test-'))
  transfers = demoTransfers()
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

async function readAll(f: DemoFile): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const c of f.open()) chunks.push(Buffer.from(c as Buffer))
  return Buffer.concat(chunks)
}

/** Length, MD5 and CRC-32 of a file's stream, without holding it in memory. */
async function digest(f: DemoFile): Promise<{ length: number; md5: string; crc32: number }> {
  const hash = createHash('md5')
  let length = 0
  let crc = 0
  for await (const c of f.open()) {
    const buf = c as Buffer
    length += buf.length
    hash.update(buf)
    crc = crc32(buf, crc)
  }
  return { length, md5: hash.digest('hex'), crc32: crc }
}

function find(subject: string | RegExp, name: string): DemoFile {
  for (const t of transfers) {
    if (typeof subject === 'string' ? t.subject !== subject : !subject.test(t.subject)) continue
    const f = t.files.find((x) => x.name === name)
    if (f) return f
  }
  throw new Error(`no demo file ${name}`)
}

describe('demoTransfers: what the inbox holds', () => {
  it('covers the cases the mount must handle', () => {
    expect(new Set(transfers.map((t) => t.from)).size).toBeGreaterThanOrEqual(3)
    const subjects = transfers.map((t) => t.subject)
    expect(subjects.some((s) => s.includes('/'))).toBe(true)
    expect(subjects).toContain('..')
    expect(subjects.some((s) => Buffer.byteLength(s) === 300)).toBe(true)
    expect(subjects.some((s) => /é/.test(s) && /日本/.test(s) && /\p{Extended_Pictographic}/u.test(s))).toBe(true)

    const locked = transfers.filter((t) => t.password !== undefined)
    expect(locked.map((t) => t.password)).toEqual([DEMO_PASSWORD])
    expect(DEMO_PASSWORD).toBe('demo-secret')
    expect(transfers.filter((t) => t.expired)).toHaveLength(1)
    expect(transfers.some((t) => t.files.length === 300)).toBe(true)

    const names = transfers.flatMap((t) => t.files.map((f) => f.name))
    expect(names).toContain('data/raw.csv')
    expect(names.some((n) => n.split('/').includes('..'))).toBe(true)
    expect(names.some((n) => /[\u0000-\u001f]/.test(n))).toBe(true)
    expect(names.some((n) => Buffer.byteLength(n) > 255)).toBe(true)
    expect(names.some((n) => /日本/.test(n)) && names.some((n) => /é/.test(n))).toBe(true)
    expect(transfers.some((t) => t.files.some((f) => f.size === 1024 ** 3))).toBe(true)
    for (const t of transfers) {
      expect(new Set(t.files.map((f) => f.name)).size).toBe(t.files.length)
      expect(t.sentAgoMs).toBeGreaterThan(0)
    }
  })

  it('includes names that collide once control characters are replaced or names cut to 255 bytes', () => {
    const names = transfers.flatMap((t) => t.files.map((f) => f.name))
    const byControl = new Map<string, number>()
    for (const n of names) {
      if (!/[\u0001-\u001f]/.test(n)) continue
      const safe = n.replace(/[\u0000-\u001f]/g, '_')
      byControl.set(safe, (byControl.get(safe) ?? 0) + 1)
    }
    expect([...byControl.values()].some((c) => c >= 2)).toBe(true)
    const long = names.filter((n) => Buffer.byteLength(n) > 255).map((n) => Buffer.from(n).subarray(0, 250).toString())
    expect(new Set(long).size).toBeLessThan(long.length)
  })

  it('is the same list every time', () => {
    const again = demoTransfers()
    const shape = (ts: DemoTransfer[]) =>
      ts.map((t) => ({ ...t, sentAgoMs: t.sentAgoMs, files: t.files.map((f) => [f.name, f.size]) }))
    expect(shape(again)).toEqual(shape(transfers))
  })
})

describe('demoTransfers: file contents', () => {
  it('every stream yields exactly `size` bytes, and the same bytes twice (1 GiB file included)', async () => {
    const all = transfers.flatMap((t) => t.files)
    for (const f of all) {
      const first = await digest(f)
      const second = await digest(f)
      expect({ name: f.name, length: first.length }).toEqual({ name: f.name, length: f.size })
      expect(second).toEqual(first)
      // Digests given up front (the 1 GiB file's, which seeding does not compute) are its bytes'.
      if (f.digests) expect({ name: f.name, ...f.digests }).toEqual({ name: f.name, md5: first.md5, crc32: first.crc32 })
    }
    expect(all.filter((f) => f.digests).map((f) => f.size)).toEqual([1024 ** 3])
    // A fresh list opens fresh generators with the same result.
    const big = demoTransfers().flatMap((t) => t.files).find((f) => f.size === 1024 ** 3)!
    const bigAgain = transfers.flatMap((t) => t.files).find((f) => f.size === 1024 ** 3)!
    expect((await digest(big)).md5).toBe((await digest(bigAgain)).md5)
  })

  it('the large file has no two equal sectors where a wrong offset would hide', async () => {
    const size = 3 * 1024 * 1024 + 1000 // not a multiple of the block or the sector
    const chunks: Buffer[] = []
    for await (const c of largeFileStream(size)) chunks.push(c as Buffer)
    const data = Buffer.concat(chunks)
    expect(data.length).toBe(size)
    const seen = new Set<string>()
    for (let at = 0; at + 512 <= size; at += 512) {
      expect(data.readUInt32BE(at + 4)).toBe(at)
      seen.add(createHash('md5').update(data.subarray(at, at + 512)).digest('hex'))
    }
    expect(seen.size).toBe(Math.floor(size / 512))
    // Not a stamp in zeros: the rest of the bytes look random.
    const counts = new Array<number>(256).fill(0)
    for (const b of data) counts[b]!++
    expect(Math.min(...counts)).toBeGreaterThan(size / 256 / 2)
  })

  it('the PNGs are valid: signature, chunk CRCs, IHDR, and IDAT inflating to the image size', async () => {
    for (const name of ['charts/revenue.png', 'photos/harbour.png']) {
      const data = await readAll(find('Quarterly report', name))
      expect(data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true)
      const chunks: Record<string, Buffer> = {}
      const order: string[] = []
      for (let at = 8; at < data.length; ) {
        const length = data.readUInt32BE(at)
        const type = data.toString('latin1', at + 4, at + 8)
        const body = data.subarray(at + 8, at + 8 + length)
        expect(data.readUInt32BE(at + 8 + length)).toBe(crc32(data.subarray(at + 4, at + 8 + length)))
        chunks[type] = body
        order.push(type)
        at += 12 + length
      }
      expect(order[0]).toBe('IHDR')
      expect(order[order.length - 1]).toBe('IEND')
      const width = chunks.IHDR!.readUInt32BE(0)
      const height = chunks.IHDR!.readUInt32BE(4)
      expect([chunks.IHDR![8], chunks.IHDR![9]]).toEqual([8, 2])
      expect(inflateSync(chunks.IDAT!).length).toBe((width * 3 + 1) * height)
    }
  })

  it('the PDFs are valid: header, cross-reference offsets at their objects, startxref, %%EOF', async () => {
    for (const f of [find('Quarterly report', 'summary.pdf'), find(/password/, 'contract-2024.pdf')]) {
      const pdf = (await readAll(f)).toString('latin1')
      expect(pdf.startsWith('%PDF-1.4\n')).toBe(true)
      expect(pdf.endsWith('%%EOF\n')).toBe(true)
      const startxref = Number(/startxref\n(\d+)\n%%EOF\n$/.exec(pdf)![1])
      expect(pdf.slice(startxref, startxref + 5)).toBe('xref\n')
      const [, first, count] = /^xref\n(\d+) (\d+)\n/.exec(pdf.slice(startxref))!
      expect(first).toBe('0')
      const rows = pdf.slice(startxref).split('\n').slice(2, 2 + Number(count))
      rows.slice(1).forEach((row, i) => {
        expect(row).toMatch(/^\d{10} 00000 n $/)
        const at = Number(row.slice(0, 10))
        expect(pdf.slice(at, at + `${i + 1} 0 obj`.length)).toBe(`${i + 1} 0 obj`)
      })
      const length = Number(/\/Length (\d+) >>\nstream\n/.exec(pdf)![1])
      const streamAt = pdf.indexOf('stream\n') + 'stream\n'.length
      expect(pdf.slice(streamAt + length, streamAt + length + 11)).toBe('\nendstream\n')
      expect(pdf).toContain('/Type /Catalog')
    }
  })

  it('the ZIP passes unzip -t and holds the other demo files byte for byte', async () => {
    const zip = join(dir, 'project-files.zip')
    await writeFile(zip, await readAll(find(/Database export/, 'project-files.zip')))
    const test = await run('unzip', ['-t', zip])
    expect(test.stdout).toContain('No errors detected')
    const list = await run('unzip', ['-Z1', zip])
    expect(list.stdout.trim().split('\n')).toEqual([
      'project/report.txt', 'project/data/raw.csv', 'project/images/revenue.png', 'project/Café 日本.txt',
    ])
    const out = join(dir, 'unzipped')
    await run('unzip', ['-q', zip, '-d', out])
    expect((await readFile(join(out, 'project/data/raw.csv'))).equals(await readAll(find('Quarterly report', 'data/raw.csv')))).toBe(true)
    expect((await readFile(join(out, 'project/images/revenue.png'))).equals(await readAll(find('Quarterly report', 'charts/revenue.png')))).toBe(true)
  })

  it('the SQLite database answers queries from sqlite3', async () => {
    const db = join(dir, 'inventory.sqlite')
    const data = await readAll(find(/Database export/, 'inventory.sqlite'))
    expect(data.subarray(0, 16).toString('latin1')).toBe('SQLite format 3\u0000')
    await writeFile(db, data)
    const { stdout } = await run('sqlite3', [db, 'select count(*) from products; select count(*) from orders; pragma integrity_check;'])
    expect(stdout.trim().split('\n')).toEqual(['250', '1000', 'ok'])
    const { stdout: join1 } = await run('sqlite3', [db, "select p.sku from orders o join products p on p.id = o.product_id where o.id = 1"])
    expect(join1.trim()).toBe('SKU-00038')
  })
})

describe('fixturePath: found from src/ and from dist/src/', () => {
  const expected = new URL('src/emulator/fixtures/inventory.sqlite', repoRoot).pathname

  it('from the source module (vitest)', () => {
    expect(fixturePath('inventory.sqlite')).toBe(expected)
  })

  it('from where tsc puts the module (dist/src/emulator/)', () => {
    expect(fixturePath('inventory.sqlite', new URL('dist/src/emulator/demo-content.js', repoRoot).href)).toBe(expected)
    expect(() => fixturePath('inventory.sqlite', 'file:///nowhere/dist/src/emulator/demo-content.js')).toThrow(/not found/)
  })

  it('a real tsc build run by node finds the database and yields its bytes', async () => {
    // Build into a scratch tree shaped like the repo: <tmp>/dist/src/emulator/*.js next to <tmp>/src.
    const root = join(dir, 'build')
    await mkdir(root, { recursive: true })
    await symlink(new URL('src', repoRoot).pathname, join(root, 'src'))
    // The demo's images are drawn with npm packages (pngjs, jpeg-js): the build resolves them here.
    await symlink(new URL('node_modules', repoRoot).pathname, join(root, 'node_modules'))
    await writeFile(join(root, 'package.json'), '{"type":"module"}\n')
    const tsc = new URL('node_modules/.bin/tsc', repoRoot).pathname
    await run(tsc, [
      '--outDir', join(root, 'dist'), '--rootDir', new URL('.', repoRoot).pathname,
      '--module', 'NodeNext', '--moduleResolution', 'NodeNext', '--target', 'ES2022', '--types', 'node',
      '--skipLibCheck', '--strict', new URL('src/emulator/demo-content.ts', repoRoot).pathname,
    ], { cwd: new URL('.', repoRoot).pathname })
    const built = pathToFileURL(join(root, 'dist/src/emulator/demo-content.js')).href
    const script = `
      const m = await import(${JSON.stringify(built)})
      const f = m.demoTransfers().flatMap((t) => t.files).find((f) => f.name === 'inventory.sqlite')
      let n = 0
      for await (const c of f.open()) n += c.length
      console.log(JSON.stringify({ size: f.size, n }))`
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script])
    const size = (await readFile(expected)).length
    expect(JSON.parse(stdout)).toEqual({ size, n: size })
  })
})
