// The MD5 of a file or of any range of it, worked out on worker threads, many at once;
// a file that is not there is an error, not a hang.
import { createHash, randomBytes } from 'node:crypto'
import { mkdtemp, rm, stat, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FileHashPool } from '../../src/base/file-hash-pool.js'

const execFileP = promisify(execFile)
const source = fileURLToPath(new URL('../../src/base/file-hash-pool.ts', import.meta.url))
const tsRegister = fileURLToPath(new URL('../fuse/fixtures/register-ts.mjs', import.meta.url))

let dir = ''
let data: Buffer
const pool = new FileHashPool(2)
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'transferfs-hashpool-'))
  data = randomBytes(3 * 1024 * 1024 + 17)
  await writeFile(join(dir, 'f'), data)
})
afterAll(async () => {
  await pool.close()
  await rm(dir, { recursive: true, force: true })
})

describe('FileHashPool', () => {
  it('hashing leaves the atime as it was: an outbox file keeps the atime touch -a gave it through its upload (found by test/fuse/mmap-writes.test.ts)', async () => {
    // Set years back, before the ctime, so a relatime disk would refresh it on a read.
    const atime = new Date('2005-06-19T01:16:43.260Z')
    await utimes(join(dir, 'f'), atime, atime)
    await pool.md5(join(dir, 'f'))
    expect((await stat(join(dir, 'f'))).atime).toEqual(atime)
  })

  it('hashes ranges across and inside its read buffer, many at once', async () => {
    const ranges = [[0, data.length], [1, 10], [1024 * 1024 - 3, 2 * 1024 * 1024 + 9], [data.length - 1, 1], [5, 0]] as const
    const got = await Promise.all(ranges.map(([p, l]) => pool.md5(join(dir, 'f'), p, l)))
    expect(got).toEqual(ranges.map(([p, l]) => createHash('md5').update(data.subarray(p, p + l)).digest('hex')))
  })

  it('without a length, hashes to the end of the file (a small read buffer takes many reads)', async () => {
    const small = new FileHashPool(1, 4096)
    try {
      expect(await small.md5(join(dir, 'f'))).toBe(createHash('md5').update(data).digest('hex'))
      expect(await small.md5(join(dir, 'f'), 100)).toBe(createHash('md5').update(data.subarray(100)).digest('hex'))
    } finally {
      await small.close()
    }
  })

  it('a missing file or a range past the end fails; the pool goes on working', async () => {
    await expect(pool.md5(join(dir, 'nope'), 0, 10)).rejects.toThrow(/ENOENT/)
    await expect(pool.md5(join(dir, 'f'), data.length - 5, 10)).rejects.toThrow(/ended/)
    expect(await pool.md5(join(dir, 'f'), 0, 4)).toBe(createHash('md5').update(data.subarray(0, 4)).digest('hex'))
  })

  it('a job under way keeps the process alive until answered; an idle pool, warmed or used, lets it exit', async () => {
    // A CLI command ends when its work does: a pool holding it open hung `transferfs send`.
    const script = join(dir, 'exits.ts')
    await writeFile(script, `import { FileHashPool } from ${JSON.stringify(source)}
const pool = new FileHashPool(2).warm()
console.log(await pool.md5(${JSON.stringify(join(dir, 'f'))}))
`)
    const started = Date.now()
    const { stdout } = await execFileP(process.execPath, ['--import', tsRegister, script], { timeout: 20_000 })
    expect(stdout.trim()).toBe(createHash('md5').update(data).digest('hex'))
    expect(Date.now() - started).toBeLessThan(15_000)
  }, 30_000)

  it('jobs still queued when their signal aborts are dropped; the one running finishes', async () => {
    const one = new FileHashPool(1)
    try {
      const ac = new AbortController()
      const jobs = [0, 1, 2].map(() => one.md5(join(dir, 'f'), 0, null, ac.signal))
      ac.abort(new Error('given up'))
      const settled = await Promise.allSettled(jobs)
      expect(settled.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected'])
      expect((settled[1] as PromiseRejectedResult).reason.message).toBe('given up')
      expect(await one.md5(join(dir, 'f'), 0, 4)).toBe(createHash('md5').update(data.subarray(0, 4)).digest('hex'))
    } finally {
      await one.close()
    }
  })

  it('once closed it refuses', async () => {
    const other = new FileHashPool(1)
    await other.close()
    await expect(other.md5(join(dir, 'f'), 0, 1)).rejects.toThrow(/closed/)
  })
})
