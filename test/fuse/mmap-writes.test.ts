// Writes through a real shared mmap in outbox/, mixed with pwrite, growing the file, chmod
// and `touch -m`/`touch -a`: the kernel turns the mapping's dirty pages into whole-page
// writes cut at the file's size, at the close. Cases are drawn with a fixed seed; each
// file's bytes are worked out here too. The mount must show exactly those bytes and the
// last mode and times set, and the service must receive exactly those bytes, once.
import path from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { run } from '../support/mount.js'
import { md5, outboxDrained, sentRecords, transferFiles, type User, useSendingMount } from '../send-mount/helpers.js'

const USER: User = { email: 'mapper@example.com', password: 'pw-mapper-123456' }
const world = useSendingMount(USER)
const FOLDER = 'mapped'
/**
 * SEND_MMAP_SEED=n draws other cases. Seed 1's found the sender's reads (files go up as
 * they are closed) moving an atime set by touch -a, now and then.
 */
const SEED = Number(process.env.SEND_MMAP_SEED ?? 1)

// Modes keep the owner's read (the kernel checks modes: the test reads every file back)
// and, while the file is still written to, the owner's write.
const WRITABLE_MODES = [0o600, 0o640, 0o644, 0o660, 0o666, 0o700, 0o755]
const FINAL_MODES = [...WRITABLE_MODES, 0o400, 0o440, 0o444, 0o500, 0o604, 0o4755, 0o1644]

type Step =
  | { op: 'mmap'; edits: Array<{ at: number; data: number[] }> }
  | { op: 'pwrite'; at: number; data: number[] }
  | { op: 'grow'; by: number }
  | { op: 'chmod'; mode: number }
  | { op: 'touch'; which: '-m' | '-a'; ms: number }

interface Case {
  size: number
  steps: Step[]
  /** Done last, in this order: the times each keep what the other set. */
  last: Array<{ op: 'chmod'; mode: number } | { op: 'touch'; which: '-m' | '-a'; ms: number }>
}

/** Times to the ms, years back. */
const ms = fc.integer({ min: Date.UTC(2001, 0, 1), max: Date.UTC(2019, 0, 1) })
const bytesArb = (max: number) => fc.array(fc.nat({ max: 255 }), { minLength: 1, maxLength: max })
const step: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.record({ op: fc.constant('mmap' as const), edits: fc.array(fc.record({ at: fc.nat(), data: bytesArb(200) }), { minLength: 1, maxLength: 6 }) }), weight: 4 },
  fc.record({ op: fc.constant('pwrite' as const), at: fc.nat(), data: bytesArb(3000) }),
  fc.record({ op: fc.constant('grow' as const), by: fc.integer({ min: 1, max: 9000 }) }),
  fc.record({ op: fc.constant('chmod' as const), mode: fc.constantFrom(...WRITABLE_MODES) }),
  fc.record({ op: fc.constant('touch' as const), which: fc.constantFrom('-m' as const, '-a' as const), ms }),
)
const caseArb: fc.Arbitrary<Case> = fc.record({
  size: fc.integer({ min: 1, max: 20_000 }),
  steps: fc.array(step, { minLength: 1, maxLength: 6 }),
  last: fc.tuple(fc.constantFrom(...FINAL_MODES), ms, ms).chain(([mode, a, m]) =>
    fc.shuffledSubarray([{ op: 'chmod' as const, mode }, { op: 'touch' as const, which: '-a' as const, ms: a }, { op: 'touch' as const, which: '-m' as const, ms: m }], { minLength: 3, maxLength: 3 })),
})

/**
 * Runs the cases on files f0, f1... of a new folder, then reports each file's mode, times
 * and MD5 as the mount shows them. f0 stays open until then, so the folder's transfer is
 * not completed while it is being written and looked at (closed files go up meanwhile).
 */
const SCRIPT = String.raw`
import hashlib, json, mmap, os, subprocess, sys
folder, cases = sys.argv[1], json.loads(sys.stdin.read())
os.mkdir(folder)
hold = None
def touch(p, which, ms):
    subprocess.run(['touch', which, '-d', '@%d.%03d' % (ms // 1000, ms % 1000), p], check=True)
for i, c in enumerate(cases):
    p = os.path.join(folder, 'f%d' % i)
    with open(p, 'wb') as f:
        f.write(bytes((j * 7 + i) % 251 for j in range(c['size'])))
    if hold is None:
        hold = os.open(p, os.O_RDONLY)
    for s in c['steps'] + c['last']:
        if s['op'] == 'mmap':
            fd = os.open(p, os.O_RDWR)
            m = mmap.mmap(fd, 0)
            for e in s['edits']:
                m[e['at']:e['at'] + len(e['data'])] = bytes(e['data'])
            m.close()
            os.close(fd)
        elif s['op'] == 'pwrite':
            fd = os.open(p, os.O_WRONLY)
            os.pwrite(fd, bytes(s['data']), s['at'])
            os.close(fd)
        elif s['op'] == 'grow':
            fd = os.open(p, os.O_RDWR)
            os.ftruncate(fd, os.fstat(fd).st_size + s['by'])
            os.close(fd)
        elif s['op'] == 'chmod':
            os.chmod(p, s['mode'])
        else:
            touch(p, s['which'], s['ms'])
out = []
for i in range(len(cases)):
    p = os.path.join(folder, 'f%d' % i)
    st = os.stat(p)
    with open(p, 'rb') as f:
        out.append({'mode': st.st_mode & 0o7777, 'atimeNs': str(st.st_atime_ns), 'mtimeNs': str(st.st_mtime_ns), 'md5': hashlib.md5(f.read()).hexdigest()})
os.close(hold)
print(json.dumps(out))
`

/**
 * The case's file as it must end, worked out here; each mmap edit is cut to the file (a
 * mapping ends at the size the file had when mapped) and the steps are made to fit it.
 */
function fitted(c: Case, i: number): { c: Case; content: Buffer } {
  let content = Buffer.from(Array.from({ length: c.size }, (_, j) => (j * 7 + i) % 251))
  const steps: Step[] = c.steps.map((s) => {
    if (s.op === 'mmap') {
      const edits = s.edits.map((e) => {
        const at = e.at % content.length
        const data = e.data.slice(0, content.length - at)
        Buffer.from(data).copy(content, at)
        return { at, data }
      })
      return { op: 'mmap', edits }
    }
    if (s.op === 'pwrite') {
      const at = s.at % (content.length + 1)
      const next = Buffer.alloc(Math.max(content.length, at + s.data.length))
      content.copy(next)
      Buffer.from(s.data).copy(next, at)
      content = next
      return { ...s, at }
    }
    if (s.op === 'grow') content = Buffer.concat([content, Buffer.alloc(s.by)])
    return s
  })
  return { c: { ...c, steps }, content }
}

describe('mmap writes in outbox/', () => {
  it('the bytes written through a shared mapping are on the mount and sent exactly, with the mode and times last set', async () => {
    const drawn = fc.sample(caseArb, { seed: SEED, numRuns: 6 }).map(fitted)
    const folder = path.join(world.account.mountDir, 'outbox', FOLDER)
    const r = await run('python3', ['-c', SCRIPT, folder], { input: JSON.stringify(drawn.map((d) => d.c)), timeoutMs: 60_000 })
    expect(r, r.stderr).toMatchObject({ code: 0 })
    const shown = JSON.parse(r.stdout) as Array<{ mode: number; atimeNs: string; mtimeNs: string; md5: string }>
    drawn.forEach(({ c, content }, i) => {
      const last = (op: string, which?: string) => c.last.find((s) => s.op === op && (!which || (s.op === 'touch' && s.which === which)))
      const ms = (ns: string) => Number(BigInt(ns) / 1_000_000n)
      expect({
        md5: shown[i]!.md5,
        mode: shown[i]!.mode.toString(8),
        atime: new Date(ms(shown[i]!.atimeNs)).toISOString(),
        mtime: new Date(ms(shown[i]!.mtimeNs)).toISOString(),
      }, `f${i}: ${JSON.stringify(c.steps.map((s) => s.op))} then ${JSON.stringify(c.last)}`).toEqual({
        md5: md5(content),
        mode: (last('chmod') as { mode: number }).mode.toString(8),
        atime: new Date((last('touch', '-a') as { ms: number }).ms).toISOString(),
        mtime: new Date((last('touch', '-m') as { ms: number }).ms).toISOString(),
      })
    })
    expect(await outboxDrained(world.account)).toBe(true)
    const recs = (await sentRecords(world.account)).filter((s) => s.subject === FOLDER)
    expect(recs).toHaveLength(1)
    expect(await transferFiles(world.client, recs[0]!.transferid)).toEqual(new Map(drawn.map(({ content }, i) => [`f${i}`, md5(content)])))
  })
})
