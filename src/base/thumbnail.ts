// Small images in pure JavaScript (pngjs, jpeg-js: nothing to compile or download at
// install time): decode a PNG or JPEG, shrink it to fit a square, encode a PNG with text
// chunks, and read those chunks back. The local service makes its thumbnails with it and
// the mount writes the desktop's thumbnail cache with it; it imports nothing of ours.
import jpeg from 'jpeg-js'
import { crc32 } from 'node:zlib'
import { PNG } from 'pngjs'

/** 8-bit RGBA, row after row. */
export interface Rgba {
  width: number
  height: number
  data: Buffer
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
const JPEG_SOI = Buffer.from([0xff, 0xd8, 0xff])
/** Pixels a decoded image may hold: anything larger is not worth a thumbnail here (memory). */
const MAX_PIXELS = 50_000_000

export function isPng(bytes: Buffer): boolean {
  return bytes.length > PNG_SIGNATURE.length && bytes.subarray(0, PNG_SIGNATURE.length).equals(PNG_SIGNATURE)
}

export function isJpeg(bytes: Buffer): boolean {
  return bytes.length > JPEG_SOI.length && bytes.subarray(0, JPEG_SOI.length).equals(JPEG_SOI)
}

/** A baseline JPEG of the image, quality 1..100; transparent parts come out white (JPEG has no alpha). */
export function encodeJpeg(img: Rgba, quality = 85): Buffer {
  const data = Buffer.from(img.data)
  for (let i = 0; i < data.length; i += 4) {
    const alpha = data[i + 3]!
    if (alpha === 255) continue
    for (let c = 0; c < 3; c++) data[i + c] = Math.round((data[i + c]! * alpha + 255 * (255 - alpha)) / 255)
    data[i + 3] = 255
  }
  return jpeg.encode({ data, width: img.width, height: img.height }, quality).data
}

/** An opaque image from a pixel function (x, y) → [r, g, b]. */
export function drawImage(width: number, height: number, pixel: (x: number, y: number) => readonly [number, number, number]): Rgba {
  const data = Buffer.alloc(width * height * 4)
  // Written byte by byte: an array made and copied per pixel cost the demo's four photos most
  // of a CPU-second at every start of the demo (and over ten under emulation).
  for (let y = 0, at = 0; y < height; y++) {
    for (let x = 0; x < width; x++, at += 4) {
      const [r, g, b] = pixel(x, y)
      data[at] = r
      data[at + 1] = g
      data[at + 2] = b
      data[at + 3] = 255
    }
  }
  return { width, height, data }
}

/** A PNG or JPEG as RGBA; null when the bytes are neither, or broken, or too large. */
export function decodeImage(bytes: Buffer): Rgba | null {
  try {
    if (isPng(bytes)) {
      const png = PNG.sync.read(bytes)
      return { width: png.width, height: png.height, data: png.data }
    }
    if (isJpeg(bytes)) {
      const img = jpeg.decode(bytes, { useTArray: true, formatAsRGBA: true, maxResolutionInMP: MAX_PIXELS / 1e6 })
      return { width: img.width, height: img.height, data: Buffer.from(img.data.buffer, img.data.byteOffset, img.data.byteLength) }
    }
  } catch {
    return null
  }
  return null
}

/** The image shrunk (never enlarged) so that neither side exceeds `max`, each pixel the mean of those it covers. */
export function fitWithin(img: Rgba, max: number): Rgba {
  const scale = Math.min(1, max / Math.max(img.width, img.height))
  if (scale === 1) return img
  const width = Math.max(1, Math.round(img.width * scale))
  const height = Math.max(1, Math.round(img.height * scale))
  const out = Buffer.alloc(width * height * 4)
  for (let y = 0; y < height; y++) {
    const y0 = Math.floor((y * img.height) / height)
    const y1 = Math.max(y0 + 1, Math.floor(((y + 1) * img.height) / height))
    for (let x = 0; x < width; x++) {
      const x0 = Math.floor((x * img.width) / width)
      const x1 = Math.max(x0 + 1, Math.floor(((x + 1) * img.width) / width))
      const sum = [0, 0, 0, 0]
      for (let sy = y0; sy < y1; sy++) {
        for (let sx = x0; sx < x1; sx++) {
          const i = (sy * img.width + sx) * 4
          for (let c = 0; c < 4; c++) sum[c]! += img.data[i + c]!
        }
      }
      const n = (y1 - y0) * (x1 - x0)
      const o = (y * width + x) * 4
      for (let c = 0; c < 4; c++) out[o + c] = Math.round(sum[c]! / n)
    }
  }
  return { width, height, data: out }
}

/** One PNG chunk: length, type, data, CRC of type and data. */
export function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(typed) >>> 0)
  return Buffer.concat([length, typed, crc])
}

/**
 * A PNG of the image with a tEXt chunk per entry of `text` (keyword, NUL, Latin-1 text),
 * placed right after IHDR so that a reader finds them without reading the pixels.
 */
export function encodePng(img: Rgba, text: Record<string, string> = {}): Buffer {
  const png = new PNG({ width: img.width, height: img.height })
  img.data.copy(png.data)
  const plain = PNG.sync.write(png)
  const headerEnd = PNG_SIGNATURE.length + 8 + 13 + 4
  const chunks = Object.entries(text).map(([key, value]) => pngChunk('tEXt', Buffer.from(`${key}\0${value}`, 'latin1')))
  return Buffer.concat([plain.subarray(0, headerEnd), ...chunks, plain.subarray(headerEnd)])
}

/** The tEXt chunks of a PNG (up to its first IDAT), keyword → text; null when not a PNG. */
export function readPngText(bytes: Buffer): Record<string, string> | null {
  if (!isPng(bytes)) return null
  const text: Record<string, string> = {}
  let at = PNG_SIGNATURE.length
  while (at + 8 <= bytes.length) {
    const length = bytes.readUInt32BE(at)
    const type = bytes.toString('latin1', at + 4, at + 8)
    if (type === 'IDAT' || type === 'IEND' || at + 12 + length > bytes.length) break
    if (type === 'tEXt') {
      const data = bytes.subarray(at + 8, at + 8 + length)
      const nul = data.indexOf(0)
      if (nul > 0) text[data.toString('latin1', 0, nul)] = data.toString('latin1', nul + 1)
    }
    at += 12 + length
  }
  return text
}
