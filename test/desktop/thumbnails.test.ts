import { createHash } from 'node:crypto'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { PNG } from 'pngjs'
import { afterAll, describe, expect, it } from 'vitest'
import { thumbnailUrlOf } from '../../src/desktop/previews.js'
import { fileUri, ThumbnailCache, thumbnailName, thumbnailRoot } from '../../src/desktop/thumbnail-cache.js'
import { arrivalNotification, notifySendArgs, sentNotification } from '../../src/desktop/notify.js'
import { decodeImage, encodePng, fitWithin, readPngText, type Rgba } from '../../src/base/thumbnail.js'
import { makeTransfer } from '../vfs/fakes.js'

function gradient(width: number, height: number): Rgba {
  const data = Buffer.alloc(width * height * 4)
  for (let i = 0; i < width * height; i++) data.set([i % 256, (i >> 8) % 256, 100, 255], i * 4)
  return { width, height, data }
}

const dirs: string[] = []
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

describe('the file URI and the cache name', () => {
  it('encodes as GLib does: unreserved and path characters kept, the rest %XX in upper case, UTF-8 bytes', () => {
    expect(fileUri('/home/a/inbox/2026-11-20 Report (a1b2)/x.png')).toBe('file:///home/a/inbox/2026-11-20%20Report%20(a1b2)/x.png')
    expect(fileUri("/m/!$&'()*+,-.:=@_~")).toBe("file:///m/!$&'()*+,-.:=@_~")
    expect(fileUri('/m/a#b?c;d%e[f]')).toBe('file:///m/a%23b%3Fc%3Bd%25e%5Bf%5D')
    expect(fileUri('/m/Café 日本.png')).toBe('file:///m/Caf%C3%A9%20%E6%97%A5%E6%9C%AC.png')
  })

  it('names the file by the MD5 of the URI', () => {
    const uri = 'file:///home/jens/photos/me.png'
    // The example of the Thumbnail Managing Standard.
    expect(thumbnailName(uri)).toBe('c6ee772d9e49320e97ec29a7eb5b1697.png')
    expect(thumbnailName('file:///x')).toBe(`${createHash('md5').update('file:///x').digest('hex')}.png`)
  })

  it('lives under $XDG_CACHE_HOME/thumbnails, else ~/.cache/thumbnails', () => {
    expect(thumbnailRoot({ XDG_CACHE_HOME: '/c' })).toBe('/c/thumbnails')
    expect(thumbnailRoot({})).toBe(path.join(os.homedir(), '.cache', 'thumbnails'))
  })
})

describe('images', () => {
  it('shrinks to fit, never enlarges, keeps the aspect', () => {
    const big = fitWithin(gradient(400, 200), 128)
    expect([big.width, big.height]).toEqual([128, 64])
    const small = gradient(50, 20)
    expect(fitWithin(small, 128)).toBe(small)
  })

  it('writes text chunks a PNG decoder accepts and reads them back', () => {
    const png = encodePng(gradient(10, 7), { 'Thumb::URI': 'file:///a%20b', 'Thumb::MTime': '1700000000' })
    const decoded = PNG.sync.read(png)
    expect([decoded.width, decoded.height]).toEqual([10, 7])
    expect(readPngText(png)).toEqual({ 'Thumb::URI': 'file:///a%20b', 'Thumb::MTime': '1700000000' })
    expect(decodeImage(png)?.data.equals(gradient(10, 7).data)).toBe(true)
    expect(decodeImage(Buffer.from('not an image'))).toBeNull()
  })
})

describe('the thumbnail cache', () => {
  it('writes normal/ (≤128) and large/ (≤256) with URI and MTime, and knows them again by mtime', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'thumbs-'))
    dirs.push(root)
    const cache = new ThumbnailCache(root)
    const subject = { uri: 'file:///m/inbox/x/photo.png', mtimeS: 1_700_000_123, size: 4567 }
    expect(await cache.has(subject)).toBe(false)
    await cache.write(subject, gradient(300, 150))
    const normal = PNG.sync.read((await cache.read('normal', subject.uri))!)
    const large = PNG.sync.read((await cache.read('large', subject.uri))!)
    expect([normal.width, normal.height]).toEqual([128, 64])
    expect([large.width, large.height]).toEqual([256, 128])
    const text = readPngText(await readFile(cache.pathOf('normal', subject.uri)))
    expect(text).toMatchObject({ 'Thumb::URI': subject.uri, 'Thumb::MTime': '1700000123', 'Thumb::Size': '4567' })
    expect(await cache.has(subject)).toBe(true)
    expect(await cache.has({ ...subject, mtimeS: subject.mtimeS + 1 })).toBe(false)

    const tiny = { ...subject, uri: 'file:///m/tiny.png' }
    await cache.write(tiny, gradient(100, 100))
    expect(await cache.read('large', tiny.uri)).toBeNull() // nothing more to give than normal/
  })
})

describe('which preview is a real thumbnail', () => {
  it('an image or a video, or a custom thumbnail; never a file with no preview', () => {
    const url = 'https://f/preview/t/1'
    expect(thumbnailUrlOf({ previewurl: url, smallpreview: url, category: 'image', hascustomthumbnail: false })).toBe(url)
    expect(thumbnailUrlOf({ previewurl: url, smallpreview: url, category: 'document', hascustomthumbnail: false })).toBeNull()
    expect(thumbnailUrlOf({ previewurl: url, smallpreview: url, category: 'document', hascustomthumbnail: true })).toBe(url)
    expect(thumbnailUrlOf({ previewurl: null, smallpreview: null, category: 'image', hascustomthumbnail: null })).toBeNull()
  })
})

describe('notifications', () => {
  it('an arrival names sender, subject, size and folder; a send its link', () => {
    const t = makeTransfer({ id: 'x1', subject: 'Plans', from: 'ann@example.com', size: 2048, numberoffiles: 2 })
    const n = arrivalNotification(t, '/home/a/T/inbox/2026-11-20 Plans (x1)', (b) => `${b} B`)
    expect(n.summary).toBe('New transfer from ann@example.com')
    expect(n.lines).toEqual(['Plans', '2 files, 2048 B', '/home/a/T/inbox/2026-11-20 Plans (x1)'])
    expect(notifySendArgs(n)).toEqual(['--app-name=transferfs', '--icon=folder-download', '--', n.summary,
      'Plans\n2 files, 2048 B\n/home/a/T/inbox/2026-11-20 Plans (x1)'])
    expect(sentNotification('Plans', 'https://x/d/1', '/m/sent/P')).toEqual({ summary: 'Sent: Plans', lines: ['https://x/d/1', '/m/sent/P'] })
  })

  it('a sender\'s text is shown as text: no markup, no escape sequence, no line of its own', () => {
    const t = makeTransfer({
      id: 'x2', subject: '<b>Pay</b> & <a href="https://evil.example/">now</a>\x1b]0;owned\x07\nforged line',
      from: 'mallory\x1b[2J@example.com\nNew transfer from boss@example.com', size: 1, numberoffiles: 1,
    })
    const [summary, body] = notifySendArgs(arrivalNotification(t, '/m/inbox/x2 <i>', (b) => `${b} B`)).slice(3)
    expect(summary).toBe('New transfer from mallory\\x1b[2J@example.com\\nNew transfer from boss@example.com')
    expect(body!.split('\n')).toEqual([
      '&lt;b&gt;Pay&lt;/b&gt; &amp; &lt;a href="https://evil.example/"&gt;now&lt;/a&gt;\\x1b]0;owned\\x07\\nforged line',
      '1 file, 1 B',
      '/m/inbox/x2 &lt;i&gt;',
    ])
  })
})
