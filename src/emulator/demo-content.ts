// The transfers `serve --demo` puts in the demo account's inbox.
//
// Everything is generated here, the same bytes on every run, without network: real file formats
// (PNG, PDF, ZIP, SQLite) so that tools opened on the mount have something true to chew on, a 1 GiB
// file made as a stream so it is never committed or held in memory, and names that the mount must
// make safe (a slash, `..`, control characters, 300 bytes, Unicode, names that collide once safe).
import { createReadStream, existsSync, statSync } from 'node:fs'
import { Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { deflateSync } from 'node:zlib'
import { drawImage, encodeJpeg, encodePng, pngChunk, type Rgba } from '../base/thumbnail.js'
import { crc32, zipLayout } from './zip.js'

export interface DemoFile {
  /** As the service holds it: may contain `/` (folders) and anything else a sender might type. */
  name: string
  /** Bytes; `open()` yields exactly this many. */
  size: number
  /** A fresh stream of the whole content; the same bytes every time. */
  open(): NodeJS.ReadableStream
  /** The content's MD5 and CRC-32 where they are known up front: seeding then writes it without hashing it. */
  digests?: { md5: string; crc32: number }
}

export interface DemoTransfer {
  from: string
  subject: string
  message: string
  /** How long before seeding the transfer was sent, in milliseconds. */
  sentAgoMs: number
  password?: string
  expired?: boolean
  files: DemoFile[]
}

export const DEMO_PASSWORD = 'demo-secret'
/** The generated large file's size in bytes. */
export const DEMO_LARGE_FILE_SIZE = 1024 ** 3
/**
 * Its MD5 and CRC-32 (test/emulator/demo-content.test.ts computes them again): hashing a GiB at
 * every start of the demo took seconds, and minutes on an emulated or small ARM machine.
 */
export const DEMO_LARGE_FILE_DIGESTS = { md5: 'ea5382612ead26a6427bdd7469c8c90c', crc32: 1504718839 }

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR
// Inner timestamps of the demo ZIP; fixed so the archive's bytes never change.
const ZIP_MTIME = new Date(2024, 4, 17, 9, 30, 0)

export function demoTransfers(): DemoTransfer[] {
  const report = text(reportText())
  const csv = text(csvText())
  const chart = bytes(barChartPng())
  const photo = bytes(harbourPng())
  const sqlite = fixtureFile('inventory.sqlite')

  return [
    {
      from: 'alice@example.com',
      subject: 'Quarterly report',
      message: 'Hi! Here is the Q2 report with the raw data and charts. Numbers are preliminary.',
      sentAgoMs: 2 * HOUR,
      files: [
        file('report.txt', report),
        file('summary.pdf', bytes(pdf(['Quarterly report, Q2', '', 'Revenue grew 12% over Q1.', 'See data/raw.csv for the numbers.']))),
        file('charts/revenue.png', chart),
        file('photos/harbour.png', photo),
        file('data/raw.csv', csv),
        file('data/notes/README.md', text('# Raw data\n\nOne row per day and region. Amounts in euro cents.\n')),
      ],
    },
    {
      from: 'bob@example.org',
      subject: 'Database export and project files',
      message: 'The inventory database (SQLite) and an archive of the project files.',
      sentAgoMs: 1 * DAY + 3 * HOUR,
      files: [
        { name: 'inventory.sqlite', ...sqlite },
        file('project-files.zip', bytes(projectZip([
          ['project/report.txt', report.data],
          ['project/data/raw.csv', csv.data],
          ['project/images/revenue.png', chart.data],
          ['project/Café 日本.txt', Buffer.from('Unicode inside a ZIP.\n')],
        ]))),
      ],
    },
    {
      from: 'carol@example.net',
      subject: 'Disk image (1 GiB)',
      message: 'The test disk image. Large on purpose.',
      sentAgoMs: 3 * DAY,
      files: [{ name: 'disk-image.img', size: DEMO_LARGE_FILE_SIZE, open: () => largeFileStream(DEMO_LARGE_FILE_SIZE), digests: DEMO_LARGE_FILE_DIGESTS }],
    },
    {
      from: 'dave@example.com',
      subject: 'Contracts (password protected)',
      message: `The signed contracts. The password was sent separately: ${DEMO_PASSWORD}.`,
      sentAgoMs: 5 * DAY,
      password: DEMO_PASSWORD,
      files: [
        file('contract-2024.pdf', bytes(pdf(['Service contract 2024', '', 'Between Example Ltd and Demo GmbH.']))),
        file('contract-notes.txt', text('Signed by both parties on 2024-05-02.\n')),
        // An image behind the password: no thumbnail of it may leave before the unlock.
        file('scans/signed-page.png', photo),
      ],
    },
    {
      from: 'erin@example.org',
      subject: 'Holiday photos from last year',
      message: 'These have expired by now.',
      sentAgoMs: 40 * DAY,
      expired: true,
      files: [file('holiday.png', photo), file('itinerary.txt', text('Day 1: harbour. Day 2: hills.\n'))],
    },
    {
      from: 'frank@example.com',
      subject: 'Photos from the harbour walk',
      message: 'Four photos from Sunday; the thumbnails show without downloading them.',
      sentAgoMs: 4 * HOUR,
      files: [
        file('harbour-morning.jpg', bytes(encodeJpeg(harbour(200, 70, [40, 20, 0]), 90))),
        file('harbour-noon.png', bytes(encodePng(harbour(190, 50, [0, 0, 0])))),
        file('harbour-evening.png', bytes(encodePng(harbour(60, 90, [90, -40, -90])))),
        file('harbour-night.jpg', bytes(encodeJpeg(harbour(128, 40, [-80, -120, -60]), 90))),
        file('route.txt', text('Pier, lighthouse, fish market, back along the quay.\n')),
      ],
    },
    {
      from: 'sensors@example.net',
      subject: 'Sensor logs (300 files)',
      message: 'One log per sensor and day.',
      sentAgoMs: 6 * DAY,
      files: Array.from({ length: 300 }, (_, i) => {
        const day = String(1 + Math.floor(i / 30)).padStart(2, '0')
        return file(`logs/2024-06-${day}/sensor-${String(i + 1).padStart(3, '0')}.log`, text(sensorLog(i)))
      }),
    },
    {
      from: 'alice@example.com',
      subject: 'Invoices 2024/2025',
      message: 'A subject with a slash in it.',
      sentAgoMs: 7 * DAY,
      files: [file('invoices/2024/INV-0001.txt', text('Invoice INV-0001: 1,200.00 EUR\n'))],
    },
    {
      from: 'mallory@example.com',
      subject: '..',
      message: 'A subject that is only "..", and file names that try to leave their folder.',
      sentAgoMs: 8 * DAY,
      files: [
        file('../escape.txt', text('I should stay inside the transfer folder.\n')),
        file('notes/../../etc/passwd', text('not really\n')),
        file('..', text('a file named ..\n')),
      ],
    },
    {
      from: 'bob@example.org',
      subject: longSubject(),
      message: 'A subject of exactly 300 bytes (UTF-8), too long for one file name.',
      sentAgoMs: 9 * DAY,
      files: [file('short.txt', text('The subject is the long part.\n'))],
    },
    {
      from: 'carol@example.net',
      subject: 'Café 日本 🎉 résumé',
      message: 'Unicode subjects and file names, and names that collide once made safe.',
      sentAgoMs: 10 * DAY,
      files: [
        file('résumé.txt', text('Curriculum vitae\n')),
        file('日本語のファイル.txt', text('日本語のテキスト\n')),
        file('🎉 party.txt', text('Party at eight.\n')),
        file('tab\there.txt', text('a control character in the name\n')),
        // Each pair differs only in what making safe removes: a control character, or bytes past 255.
        file('notes\u0001.txt', text('first of a colliding pair\n')),
        file('notes\u0002.txt', text('second of a colliding pair\n')),
        file(`${'long-name-'.repeat(29)}A.txt`, text('first long name\n')),
        file(`${'long-name-'.repeat(29)}B.txt`, text('second long name\n')),
      ],
    },
  ]
}

/**
 * Where a committed fixture lives. From `src/emulator/` (vitest, tsx) it sits next to this module;
 * after `tsc` the module is in `dist/src/emulator/` and fixtures are not copied, so it is found back
 * in the source tree.
 */
export function fixturePath(name: string, moduleUrl: string = import.meta.url): string {
  const candidates = [new URL(`./fixtures/${name}`, moduleUrl), new URL(`../../../src/emulator/fixtures/${name}`, moduleUrl)]
  for (const url of candidates) {
    const path = fileURLToPath(url)
    if (existsSync(path)) return path
  }
  throw new Error(`demo fixture ${name} not found next to ${moduleUrl}`)
}

/**
 * Deterministic pseudo-random bytes, generated block by block. One random block is made once; each
 * 1 MiB block is a rotated copy of it with its absolute offset stamped every 512 bytes, so no two
 * sectors of the file are equal and a byte served from the wrong place is visible.
 */
export function largeFileStream(size: number): Readable {
  const block = 1024 * 1024
  const base = randomBlock(block + 64 * 1024)
  function* blocks(): Generator<Buffer> {
    for (let offset = 0, index = 0; offset < size; offset += block, index++) {
      const length = Math.min(block, size - offset)
      const out = Buffer.allocUnsafe(length)
      const rotation = ((index * 4099) % 8192) * 8
      base.copy(out, 0, rotation, rotation + length)
      for (let at = 0; at + 8 <= length; at += 512) {
        const position = offset + at
        out.writeUInt32BE(Math.floor(position / 0x1_0000_0000), at)
        out.writeUInt32BE(position >>> 0, at + 4)
      }
      yield out
    }
  }
  return Readable.from(blocks(), { objectMode: false })
}

// ---- small builders ---------------------------------------------------------------------------

interface Content { data: Buffer }

function text(s: string): Content {
  return { data: Buffer.from(s, 'utf8') }
}

function bytes(data: Buffer): Content {
  return { data }
}

function file(name: string, content: Content): DemoFile {
  return { name, size: content.data.length, open: () => Readable.from([content.data], { objectMode: false }) }
}

function fixtureFile(name: string): { size: number; open(): NodeJS.ReadableStream } {
  const path = fixturePath(name)
  // Once, at seeding; never on a request.
  const size = statSync(path).size
  return { size, open: () => createReadStream(path) }
}

function randomBlock(length: number, seed = 0x9e3779b9): Buffer {
  const out = Buffer.allocUnsafe(length - (length % 4))
  let x = seed >>> 0
  for (let at = 0; at < out.length; at += 4) {
    // xorshift32: fast and the same everywhere.
    x ^= x << 13
    x >>>= 0
    x ^= x >>> 17
    x ^= x << 5
    x >>>= 0
    out.writeUInt32LE(x, at)
  }
  return out
}

function reportText(): string {
  const lines = ['QUARTERLY REPORT, Q2 2024', '=========================', '']
  const regions = ['North', 'South', 'East', 'West']
  regions.forEach((region, i) => {
    lines.push(`${region}: revenue ${thousands(1_200_000 + i * 173_450)} EUR, ` +
      `${12 + i * 3} new customers, churn ${(2.1 + i * 0.4).toFixed(1)}%.`)
  })
  lines.push('', 'Summary: all regions grew; West grew fastest. Details in data/raw.csv.', '')
  return lines.join('\n')
}

/** 1234567 → "1,234,567", without depending on the runtime's locale data. */
function thousands(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+$)/g, ',')
}

function csvText(): string {
  const rows = ['date,region,orders,amount_cents']
  const regions = ['North', 'South', 'East', 'West']
  for (let day = 0; day < 91; day++) {
    const date = new Date(Date.UTC(2024, 3, 1 + day)).toISOString().slice(0, 10)
    regions.forEach((region, r) => {
      const orders = 20 + ((day * 17 + r * 29) % 41)
      rows.push(`${date},${region},${orders},${orders * (1999 + r * 250)}`)
    })
  }
  return rows.join('\n') + '\n'
}

function sensorLog(i: number): string {
  const lines: string[] = []
  for (let h = 0; h < 24; h++) {
    const t = 180 + ((i * 7 + h * 13) % 60)
    lines.push(`2024-06-${String(1 + Math.floor(i / 30)).padStart(2, '0')}T${String(h).padStart(2, '0')}:00:00Z sensor=${i + 1} temp=${(t / 10).toFixed(1)}`)
  }
  return lines.join('\n') + '\n'
}

/** Exactly 300 bytes of UTF-8, with two-byte characters so a cut at a byte count can split one. */
function longSubject(): string {
  let s = 'Très long sujet: '
  while (Buffer.byteLength(s + 'é') <= 300) s += s.length % 11 === 0 ? ' ' : 'é'
  while (Buffer.byteLength(s) < 300) s += '.'
  return s
}

// ---- formats ----------------------------------------------------------------------------------

/** A truecolour PNG (8-bit RGB, no interlace) from a pixel function. */
function png(width: number, height: number, pixel: (x: number, y: number) => [number, number, number]): Buffer {
  const stride = width * 3 + 1
  const raw = Buffer.alloc(stride * height)
  for (let y = 0; y < height; y++) {
    raw[y * stride] = 0 // filter: none
    for (let x = 0; x < width; x++) {
      const [r, g, b] = pixel(x, y)
      const at = y * stride + 1 + x * 3
      raw[at] = r
      raw[at + 1] = g
      raw[at + 2] = b
    }
  }
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header.set([8, 2, 0, 0, 0], 8) // bit depth, colour type RGB, compression, filter, interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(raw, { level: 9 })),
    pngChunk('IEND', Buffer.alloc(0)),
  ])
}

function barChartPng(): Buffer {
  const bars = [62, 88, 71, 120, 97, 135]
  return png(320, 200, (x, y) => {
    if (x === 30 || y === 170) return [40, 40, 40] // axes
    const bar = Math.floor((x - 40) / 45)
    const inBar = x >= 40 && (x - 40) % 45 < 30 && bar < bars.length
    if (inBar && y < 170 && y >= 170 - bars[bar]!) return [30 + bar * 30, 110, 200 - bar * 20]
    return y % 20 === 10 && x > 30 ? [225, 225, 225] : [255, 255, 255]
  })
}

function harbourPng(): Buffer {
  // Sky, sea and a sun, in integer arithmetic so every platform draws the same pixels.
  return png(256, 192, (x, y) => {
    const dx = x - 190
    const dy = y - 50
    if (dx * dx + dy * dy < 400) return [255, 210, 80]
    if (y < 110) return [90 + (y >> 1), 150 + (y >> 2), 235]
    const wave = ((x * 7 + y * 13) ^ (y * 5)) & 15
    return [20 + wave, 70 + (y >> 2), 120 + wave * 4]
  })
}

/**
 * The harbour at another time of day, as large as a camera's small setting (1280 × 960, so
 * hundreds of KiB each, where the service's thumbnail is a few KiB): the sun elsewhere
 * (given on a 320 × 240 grid), the colours shifted.
 */
function harbour(sunX: number, sunY: number, shift: readonly [number, number, number]): Rgba {
  const clamp = (v: number) => Math.max(0, Math.min(255, v))
  return drawImage(1280, 960, (x, y) => {
    const gx = x >> 2
    const gy = y >> 2
    const dx = gx - sunX
    const dy = gy - sunY
    const sun = dx * dx + dy * dy < 500
    const wave = ((x * 7 + y * 13) ^ (y * 5)) & 15
    const [r, g, b] = sun ? [255, 210, 80] : gy < 140 ? [90 + (gy >> 1), 150 + (gy >> 2), 235] : [20 + wave, 70 + (gy >> 2), 120 + wave * 4]
    return sun ? [r, g, b] : [clamp(r + shift[0]), clamp(g + shift[1]), clamp(b + shift[2])]
  })
}

/** A one-page PDF 1.4 with Helvetica text lines, its cross-reference table at the right offsets. */
function pdf(lines: string[]): Buffer {
  const escapePdf = (s: string) => s.replace(/[\\()]/g, (c) => `\\${c}`)
  const content = ['BT', '/F1 18 Tf', '72 770 Td', '22 TL', ...lines.map((l) => `(${escapePdf(l)}) '`), 'ET'].join('\n')
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
  ]
  let out = '%PDF-1.4\n%\u00e2\u00e3\u00cf\u00d3\n'
  const offsets: number[] = []
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, 'latin1'))
    out += `${i + 1} 0 obj\n${body}\nendobj\n`
  })
  const xref = Buffer.byteLength(out, 'latin1')
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`
  for (const at of offsets) out += `${String(at).padStart(10, '0')} 00000 n \n`
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  return Buffer.from(out, 'latin1')
}

/** A stored ZIP of in-memory entries, built with the service's own ZIP layout. */
function projectZip(entries: Array<[string, Buffer]>): Buffer {
  const layout = zipLayout(entries.map(([name, data]) => ({ name, size: data.length, crc32: crc32(data), mtime: ZIP_MTIME })))
  const pieces: Buffer[] = []
  for (const s of layout.segments()) pieces.push(s.kind === 'bytes' ? s.data : entries[s.index]![1].subarray(s.start, s.end))
  return Buffer.concat(pieces)
}
