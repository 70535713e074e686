// Drives an OutboxFs the way the FUSE adapter would, on a temporary data folder, with a
// manual clock and the fake service; crash() drops it the way a killed process would.
import { constants as C, promises as fsp } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { ManualClock } from '../support/manual-clock.js'
import type { SendOptions } from '../../src/send/options.js'
import { openOutbox } from '../../src/send/open-outbox.js'
import type { OutboxFs } from '../../src/send/outbox-fs.js'
import { FakeService, type Call, type FakeSender } from './fake-service.js'

export const SETTLE = 3000

/** When an armed crash hits its call: before the service serves it, right after, or a moment after. */
export type CrashMode = 'before' | 'after' | 'late'

export class Harness {
  readonly clock = new ManualClock()
  readonly service = new FakeService()
  fs!: OutboxFs
  sender!: FakeSender
  restarts = 0
  /** What a test started from inside a service call (a write, a rename); settle() waits for it. */
  private readonly sideActions = new Set<Promise<unknown>>()

  private constructor(readonly dataDir: string, readonly options: Partial<SendOptions>, readonly freeBytes?: () => Promise<number>) {}

  static async create(options: Partial<SendOptions> = {}, freeBytes?: () => Promise<number>): Promise<Harness> {
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'send-test-'))
    const h = new Harness(dir, { settleMs: SETTLE, uploadChunkSize: 1024, retryBaseDelayMs: 1000, ...options }, freeBytes)
    await h.start()
    return h
  }

  async start(): Promise<void> {
    this.sender = this.service.sender()
    const cfg = { dataDir: this.dataDir, sender: this.sender, clock: this.clock, options: this.options, uid: 1000, gid: 1000 }
    this.fs = await openOutbox(this.freeBytes ? { ...cfg, freeBytes: this.freeBytes } : cfg)
  }

  /**
   * The process dies at its k-th service call (counted from now, this process only);
   * `onFatal` sees that call. disarmCrash() before restarting.
   */
  armCrash(k: number, mode: CrashMode, onFatal: (call: Call) => void = () => undefined): void {
    let n = 0
    const hook = (call: Call, s: FakeSender): void => {
      if (s !== this.sender || n++ !== k) return
      onFatal(call)
      const die = (): void => {
        s.kill()
        void this.fs.halt()
      }
      if (mode === 'late') setImmediate(die)
      else die()
    }
    if (mode === 'before') this.service.beforeCall = hook
    else this.service.afterCall = hook
  }

  disarmCrash(): void {
    this.service.beforeCall = null
    this.service.afterCall = null
  }

  /** The process dies: no shutdown, in-flight calls never answer; staging and journal stay. */
  async crash(): Promise<void> {
    this.sender.kill()
    await this.fs.halt()
  }

  async restart(): Promise<void> {
    await this.crash()
    this.restarts++
    await this.start()
  }

  /**
   * Starts `action` beside the outbox's own work, as another process would, without blocking
   * the service call it is started from; settle() does not return before it has finished, so a
   * change the test makes mid-upload cannot land after the outbox looked idle.
   */
  meanwhile(action: () => Promise<unknown>): void {
    const p = action().finally(() => this.sideActions.delete(p))
    this.sideActions.add(p)
  }

  /** Lets time pass until nothing is waiting: every settled entry is sent (or failed). */
  async settle(maxRounds = 200): Promise<void> {
    for (let i = 0; i < maxRounds; i++) {
      while (this.sideActions.size > 0) await Promise.all(this.sideActions)
      await this.fs.idle()
      if (this.sideActions.size > 0) continue
      const d = this.clock.nextDelay()
      if (d === null) return
      this.clock.advance(d)
    }
    throw new Error('the outbox did not settle')
  }

  async cleanup(): Promise<void> {
    await this.fs.shutdown().catch(() => undefined)
    await fsp.rm(this.dataDir, { recursive: true, force: true })
  }

  /** Names in outbox/ (top level, or under a folder). */
  ls(p = '/'): Promise<string[]> {
    return this.fs.readdir(p).then((n) => n.sort())
  }

  async readAll(p: string): Promise<Buffer> {
    const fh = await this.fs.open(p, C.O_RDONLY)
    const parts: Buffer[] = []
    for (let pos = 0; ; ) {
      const b = await this.fs.read(p, fh, pos, 65536)
      if (b.length === 0) break
      parts.push(b)
      pos += b.length
    }
    await this.fs.release(p, fh)
    return Buffer.concat(parts)
  }
}

// ---- the op sequences real tools send (cp, cp -a, rsync -a, tar x, dd, vim) --------------

async function writeAll(fs: OutboxFs, p: string, fh: number, data: Buffer, block = 4096, at = 0): Promise<void> {
  for (let off = 0; off < data.length; off += block) await fs.write(p, fh, data.subarray(off, off + block), at + off)
}

async function expectMissing(fs: OutboxFs, p: string): Promise<void> {
  await fs.getattr(p).then(
    () => { throw new Error(`${p} exists`) },
    () => undefined,
  )
}

/** `cp a.txt outbox/` */
export async function cp(fs: OutboxFs, p: string, data: Buffer): Promise<void> {
  await expectMissing(fs, p)
  const fh = await fs.create(p, 0o640)
  await fs.getattr(p)
  await writeAll(fs, p, fh, data)
  await fs.flush(p, fh)
  await fs.release(p, fh)
}

/** `cp -a` of one file. */
export async function cpA(fs: OutboxFs, p: string, data: Buffer, mtime: Date, mode = 0o640): Promise<void> {
  const fh = await fs.create(p, 0o600)
  await fs.getattr(p)
  await writeAll(fs, p, fh, data)
  await fs.utimens(p, mtime, mtime)
  await fs.getattr(p)
  await fs.chmod(p, mode)
  await fs.flush(p, fh)
  await fs.release(p, fh)
}

/** `cp -a dir outbox/`: mkdir 700, the files, a symlink, then the folder's times, owner, mode. */
export async function cpADir(fs: OutboxFs, dir: string, files: Record<string, Buffer>, mtime: Date): Promise<void> {
  await fs.mkdir(dir, 0o700)
  const made = new Set<string>()
  for (const [rel, data] of Object.entries(files)) {
    const parts = rel.split('/')
    for (let i = 1; i < parts.length; i++) {
      const sub = `${dir}/${parts.slice(0, i).join('/')}`
      if (!made.has(sub)) {
        made.add(sub)
        await fs.mkdir(sub, 0o700)
      }
    }
    await cpA(fs, `${dir}/${rel}`, data, mtime)
  }
  await fs.symlink('a.txt', `${dir}/link-to-a`)
  await fs.chown(`${dir}/link-to-a`, 1000, 1000)
  await fs.utimens(`${dir}/link-to-a`, mtime, mtime)
  for (const sub of [...made].reverse()) {
    await fs.utimens(sub, mtime, mtime)
    await fs.chown(sub, 1000, 1000)
    await fs.chmod(sub, 0o755)
  }
  await fs.utimens(dir, mtime, mtime)
  await fs.chown(dir, 1000, 1000)
  await fs.chmod(dir, 0o755)
}

/** `rsync -a a.txt outbox/`: a dot temp file, then rename over the real name. */
export async function rsyncA(fs: OutboxFs, dir: string, name: string, data: Buffer, mtime: Date): Promise<void> {
  const tmp = `${dir === '/' ? '' : dir}/.${name}.Xy12Zq`
  const final = `${dir === '/' ? '' : dir}/${name}`
  const fh = await fs.create(tmp, 0o600)
  await fs.chmod(tmp, 0o600)
  await writeAll(fs, tmp, fh, data, 32 * 1024)
  await fs.flush(tmp, fh)
  await fs.release(tmp, fh)
  await fs.utimens(tmp, mtime, mtime)
  const fh2 = await fs.open(tmp, C.O_RDONLY | C.O_NOFOLLOW)
  await fs.chmod(tmp, 0o640)
  await fs.flush(tmp, fh2)
  await fs.release(tmp, fh2)
  await fs.rename(tmp, final)
}

/** `tar -x`: folders first, files, then the folders' times last. */
export async function tarX(fs: OutboxFs, dir: string, files: Record<string, Buffer>, mtime: Date): Promise<void> {
  await fs.mkdir(dir, 0o755)
  const dirs = new Set<string>()
  for (const rel of Object.keys(files)) {
    const parts = rel.split('/')
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'))
  }
  for (const d of [...dirs].sort()) await fs.mkdir(`${dir}/${d}`, 0o755)
  for (const [rel, data] of Object.entries(files)) {
    const p = `${dir}/${rel}`
    const fh = await fs.create(p, 0o644)
    await writeAll(fs, p, fh, data, 10240)
    await fs.release(p, fh)
    await fs.utimens(p, mtime, mtime)
    await fs.chown(p, 1000, 1000)
  }
  for (const d of [...dirs].sort().reverse()) await fs.utimens(`${dir}/${d}`, mtime, mtime)
  await fs.utimens(dir, mtime, mtime)
}

/** `dd if=... of=outbox/x bs=N seek=...`: blocks written at offsets, out of order. */
export async function dd(fs: OutboxFs, p: string, data: Buffer, bs: number): Promise<void> {
  const fh = await fs.create(p, 0o644)
  const blocks: number[] = []
  for (let off = 0; off < data.length; off += bs) blocks.push(off)
  // Second half first, then the first: a sparse file filled in later.
  const half = Math.floor(blocks.length / 2)
  for (const off of [...blocks.slice(half), ...blocks.slice(0, half)]) await fs.write(p, fh, data.subarray(off, off + bs), off)
  await fs.fsync(p, fh, false)
  await fs.flush(p, fh)
  await fs.release(p, fh)
}

/** vim editing an existing file: swap file, backup by rename, new file written, backup and swap removed. */
export async function vimSave(fs: OutboxFs, p: string, data: Buffer): Promise<void> {
  const dir = path.posix.dirname(p)
  const name = path.posix.basename(p)
  const swp = `${dir === '/' ? '' : dir}/.${name}.swp`
  const sfh = await fs.create(swp, 0o600)
  await fs.write(swp, sfh, Buffer.alloc(4096, 1), 0)
  await fs.write(swp, sfh, Buffer.alloc(4096, 2), 8192)
  await fs.write(swp, sfh, Buffer.alloc(4096, 3), 4096)
  await fs.fsync(swp, sfh, false)
  await fs.rename(p, `${p}~`)
  const fh = await fs.create(p, 0o644)
  await writeAll(fs, p, fh, data, 8192)
  await fs.fsync(p, fh, false)
  await fs.flush(p, fh)
  await fs.release(p, fh)
  await fs.unlink(`${p}~`)
  await fs.flush(swp, sfh)
  await fs.release(swp, sfh)
  await fs.unlink(swp)
}

export function bytes(n: number, seed = 1): Buffer {
  const b = Buffer.alloc(n)
  let x = seed * 2654435761
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0
    b[i] = x >>> 24
  }
  return b
}
