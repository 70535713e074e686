// The service's GetRangeHash pool: the MD5 of any range of a stored file, worked out on
// worker threads, many at once; a file that is not there is an error, not a hang.
import { createHash, randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HashPool } from '../../src/emulator/hash-pool.js'

let dir = ''
let data: Buffer
const pool = new HashPool(2)
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'transferfs-hashpool-'))
  data = randomBytes(3 * 1024 * 1024 + 17)
  await writeFile(join(dir, 'f'), data)
})
afterAll(async () => {
  await pool.close()
  await rm(dir, { recursive: true, force: true })
})

describe('HashPool', () => {
  it('hashes ranges across and inside its read buffer, many at once', async () => {
    const ranges = [[0, data.length], [1, 10], [1024 * 1024 - 3, 2 * 1024 * 1024 + 9], [data.length - 1, 1], [5, 0]] as const
    const got = await Promise.all(ranges.map(([p, l]) => pool.md5(join(dir, 'f'), p, l)))
    expect(got).toEqual(ranges.map(([p, l]) => createHash('md5').update(data.subarray(p, p + l)).digest('hex')))
  })

  it('a missing file or a range past the end fails; the pool goes on working', async () => {
    await expect(pool.md5(join(dir, 'nope'), 0, 10)).rejects.toThrow(/ENOENT/)
    await expect(pool.md5(join(dir, 'f'), data.length - 5, 10)).rejects.toThrow(/ended/)
    expect(await pool.md5(join(dir, 'f'), 0, 4)).toBe(createHash('md5').update(data.subarray(0, 4)).digest('hex'))
  })

  it('once closed it refuses', async () => {
    const other = new HashPool(1)
    await other.close()
    await expect(other.md5(join(dir, 'f'), 0, 1)).rejects.toThrow(/closed/)
  })
})
