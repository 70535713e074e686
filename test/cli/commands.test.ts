// info, inbox, send, config and completion against the local service, run as a user runs
// them: the real command line in a child process, its --json parsed, its errors checked.
import { execFile } from 'node:child_process'
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Transfer } from '../../src/api/types.js'
import { EXIT } from '../../src/cli/output/exit-codes.js'
import { tempDir, unmountAll } from '../support/mount.js'
import { bytes, cli, jsonOf, putTransfer, startWorld, stopWorld, type CliWorld } from './harness.js'

let w: CliWorld
let seeded: string[]

beforeAll(async () => {
  w = await startWorld()
  seeded = await w.service.controls.seedInbox(w.service.user.email, 3, { subjectPrefix: 'Seeded' })
})
afterAll(async () => {
  await stopWorld(w)
  await unmountAll()
})

describe('without the FUSE library', () => {
  it('commands that do not mount never load the FUSE addon: inbox, send, status and config work where it cannot load', async () => {
    // fuse-native loads the addon named here when it is first required: were any of these
    // commands to load it, they would fail on a machine without the library, as they once did.
    process.env.FUSE_NATIVE_ADDON = '/nonexistent/libfuse-missing.node'
    try {
      const dir = await tempDir()
      await writeFile(path.join(dir, 'no-fuse.txt'), 'sent without FUSE\n')
      for (const args of [['inbox', '--json'], ['send', path.join(dir, 'no-fuse.txt'), '--to', 'bob@example.org'], ['status'], ['config']]) {
        const r = await cli(args)
        expect(r.code, `${args[0]}: ${r.stderr}`).toBe(0)
      }
    } finally {
      delete process.env.FUSE_NATIVE_ADDON
    }
  })
})

describe('inbox', () => {
  it('lists received transfers newest first, as a table and as JSON', async () => {
    const r = await cli(['inbox', '--json'])
    expect(r.code, r.stderr).toBe(0)
    const list = jsonOf<Transfer[]>(r)
    expect(list.map((t) => t.id)).toEqual([...seeded].reverse())
    expect(list.every((t) => t.key === undefined)).toBe(true)
    const table = await cli(['inbox'])
    expect(table.code).toBe(0)
    const lines = table.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^RECEIVED\s+SUBJECT\s+FROM\s+FILES\s+SIZE\s+STATE\s+ID$/)
    expect(lines).toHaveLength(4)
    expect(lines[1]).toContain(seeded[2])
    // Not a terminal: no colour codes.
    expect(table.stdout).not.toContain('\u001b[')
  })

  it('--search and --since narrow the list; a bad date is a usage error', async () => {
    const all = jsonOf<Transfer[]>(await cli(['inbox', '--json']))
    const one = all[1]!
    const found = jsonOf<Transfer[]>(await cli(['inbox', '--json', '--search', one.subject]))
    expect(found.map((t) => t.id)).toEqual([one.id])
    expect(jsonOf<Transfer[]>(await cli(['inbox', '--json', '--since', '2999-01-01']))).toEqual([])
    expect(jsonOf<Transfer[]>(await cli(['inbox', '--json', '--since', '30d']))).toHaveLength(3)
    const bad = await cli(['inbox', '--since', 'last tuesday'])
    expect(bad.code).toBe(EXIT.usage)
    expect(bad.stderr).toMatch(/--since "last tuesday" is neither a date/)
  })
})

describe('send and info', () => {
  it('send uploads files and folders, prints the link, and records the transfer for sent/', async () => {
    const dir = await tempDir()
    await mkdir(path.join(dir, 'photos/raw'), { recursive: true })
    await writeFile(path.join(dir, 'notes.txt'), 'hello\n')
    await writeFile(path.join(dir, 'photos/a.bin'), bytes(200_000, 3))
    await writeFile(path.join(dir, 'photos/raw/b.bin'), bytes(1000, 4))
    await writeFile(path.join(dir, 'photos/.hidden.swp'), 'temporary')
    const r = await cli(['send', path.join(dir, 'notes.txt'), path.join(dir, 'photos'), '--to', 'bob@example.org',
      '--subject', 'CLI send', '--message', 'see attached', '--days', '3', '--json'])
    expect(r.code, r.stderr).toBe(0)
    const sent = jsonOf<{ transferid: string; url: string; files: Array<{ name: string; md5: string }> }>(r)
    expect(sent.files.map((f) => f.name).sort()).toEqual(['notes.txt', 'photos/a.bin', 'photos/raw/b.bin'])
    const t = await w.client.transfers.details(sent.transferid, { filesLimit: -1 })
    expect(t.subject).toBe('CLI send')
    expect(t.message).toBe('see attached')
    expect(t.url).toBe(sent.url)
    expect(t.files.map((f) => `${f.filename} ${f.md5}`).sort()).toEqual(sent.files.map((f) => `${f.name} ${f.md5}`).sort())
    const mail = await w.service.controls.mail()
    expect(mail.some((m) => m.kind === 'recipient' && m.to === 'bob@example.org' && m.transferid === sent.transferid)).toBe(true)
    const log = await readFile(path.join(process.env.TRANSFERFS_DATA_DIR!, 'sent.jsonl'), 'utf8')
    expect(log).toContain(sent.transferid)

    // A contact group goes through forward once the transfer is complete (initialize takes addresses).
    const grouped = jsonOf<{ transferid: string }>(await cli(['send', path.join(dir, 'notes.txt'), '--to', 'team,carol@example.org', '--json']))
    const toGroup = (await w.service.controls.mail()).filter((m) => m.transferid === grouped.transferid)
    expect(toGroup.filter((m) => m.kind === 'recipient').map((m) => m.to)).toEqual(['carol@example.org'])
    expect(toGroup.filter((m) => m.kind === 'forward').map((m) => m.to).sort()).toEqual(['ann@example.com', 'ben@example.com'])

    const plain = await cli(['send', path.join(dir, 'notes.txt')])
    expect(plain.code, plain.stderr).toBe(0)
    expect(plain.stdout.trim()).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/d\/[0-9a-f]+$/)
  })

  it('send refuses missing paths with a usage error', async () => {
    const r = await cli(['send', '/nonexistent/file.txt'])
    expect(r.code).toBe(EXIT.usage)
    expect(r.stderr).toContain('no such file or folder')
  })

  it('info shows details and who downloaded which file; --files per file; --json the details', async () => {
    const t = await putTransfer(w.client, [{ name: 'a.txt', data: Buffer.from('alpha\n') }, { name: 'dir/b.bin', data: bytes(5000) }],
      { subject: 'Tracked', to: ['carol@example.net'] })
    // One download of a.txt through the CLI (a tracking record for the sender to see).
    const out = await tempDir()
    const d = await cli(['download', t.id, '-o', out])
    expect(d.code, d.stderr).toBe(0)
    const r = await cli(['info', t.id, '--json'])
    expect(r.code, r.stderr).toBe(0)
    const info = jsonOf<Transfer>(r)
    expect(info.id).toBe(t.id)
    expect(info.key).toBeUndefined()
    expect(info.files).toHaveLength(2)
    expect(info.downloads.map((x) => x.filename).sort()).toEqual(['a.txt', 'dir/b.bin'])
    const text = await cli(['info', t.id, '--files'])
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(/Subject:\s+Tracked/)
    expect(text.stdout).toMatch(/Download tracking \(2\)/)
    expect(text.stdout).toMatch(/WHEN\s+WHO\s+WHAT\s+SIZE\s+FROM\s+SPEED/)
    expect(text.stdout).toMatch(/Files \(2\)/)
    expect(text.stdout).toContain('carol@example.net')
    // Per-file tracking: a heading per downloaded file, then its table.
    expect(text.stdout).toMatch(/\ndir\/b\.bin\nWHEN/)
  })

  it('info takes a trackid, a transfer folder name, or a folder holding .transfer.json', async () => {
    const t = await putTransfer(w.client, [{ name: 'x.txt', data: Buffer.from('x') }], { subject: 'By track', to: ['dan@example.com'] })
    const link = (await w.service.controls.mail()).find((m) => m.transferid === t.id && m.to === 'dan@example.com')!.link!
    const trackid = new URL(link).searchParams.get('trackid')!
    expect(jsonOf<Transfer>(await cli(['info', trackid, '--json'])).id).toBe(t.id)

    const root = await tempDir()
    const folder = path.join(root, 'inbox', `2026-01-01 By track (${t.id})`)
    await mkdir(path.join(folder, 'sub'), { recursive: true })
    expect(jsonOf<Transfer>(await cli(['info', path.join(folder, 'sub'), '--json'])).id).toBe(t.id)
    const other = path.join(root, 'copied')
    await mkdir(other)
    await writeFile(path.join(other, '.transfer.json'), JSON.stringify({ id: t.id, subject: 'By track' }))
    expect(jsonOf<Transfer>(await cli(['info', other, '--json'])).id).toBe(t.id)
    const notOne = await cli(['info', root])
    expect(notOne.code).toBe(EXIT.usage)
    expect(notOne.stderr).toContain("is not a transfer's folder")
  })

  it('a wrong id exits 4 and says what to do', async () => {
    const r = await cli(['info', 'doesnotexist'])
    expect(r.code).toBe(EXIT.notFound)
    expect(r.stderr).toContain('no transfer with the id or trackid doesnotexist')
    expect(r.stderr).toContain('transferfs inbox')
    expect(r.stdout).toBe('')
  })

  it('a protected transfer: no password and a wrong one exit 3, the right one from stdin works', async () => {
    const t = await putTransfer(w.client, [{ name: 's.txt', data: Buffer.from('secret') }], { password: 'open sesame' })
    const none = await cli(['info', t.id])
    expect(none.code).toBe(EXIT.auth)
    expect(none.stderr).toContain('password protected')
    expect(none.stderr).toContain('--password-stdin')
    const wrong = await cli(['info', t.id, '--password', 'nope'])
    expect(wrong.code).toBe(EXIT.auth)
    expect(wrong.stderr).toContain('wrong password')
    const right = await cli(['info', t.id, '--password-stdin', '--json'], { input: 'open sesame\n' })
    expect(right.code, right.stderr).toBe(0)
    expect(jsonOf<Transfer>(right).files[0]!.filename).toBe('s.txt')
  })

  it('usage errors exit 2: an unknown flag, a missing argument', async () => {
    expect((await cli(['info', 'x', '--bogus'])).code).toBe(EXIT.usage)
    expect((await cli(['download'])).code).toBe(EXIT.usage)
    const help = await cli(['download', '--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('Examples:')
  })
})

describe('config and completion', () => {
  it('shows each value and its source, sets and unsets values in an owner-only file, masks secrets', async () => {
    const shown = jsonOf<{ configFile: string; settings: Record<string, { value: unknown; source: string }> }>(await cli(['config', '--json']))
    expect(shown.settings.apiUrl).toMatchObject({ value: w.service.baseUrl, source: 'env' })
    expect(shown.settings.apiKey).toMatchObject({ value: '********', source: 'env' })
    expect(shown.settings.chunkSize).toMatchObject({ value: 50 * 1024 * 1024, source: 'default' })

    expect((await cli(['config', 'set', 'chunk-size', '16M'])).code).toBe(0)
    expect((await cli(['config', 'set', 'password', '-'], { input: 'hunter2\n' })).code).toBe(0)
    const file = JSON.parse(await readFile(shown.configFile, 'utf8')) as Record<string, unknown>
    expect(file).toEqual({ chunkSize: '16M', password: 'hunter2' })
    expect((await stat(shown.configFile)).mode & 0o777).toBe(0o600)
    const after = await cli(['config'])
    expect(after.stdout).toMatch(/chunkSize\s+16 MiB\s+file/)
    expect(after.stdout).toMatch(/password\s+\*{8}\s+file/)
    expect(after.stdout).not.toContain('hunter2')

    expect((await cli(['config', 'unset', 'password'])).code).toBe(0)
    expect((await cli(['config', 'unset', 'chunkSize'])).code).toBe(0)
    expect(JSON.parse(await readFile(shown.configFile, 'utf8'))).toEqual({})

    const bad = await cli(['config', 'set', 'days', 'seven'])
    expect(bad.code).toBe(EXIT.usage)
    expect(bad.stderr).toContain('invalid value for days')
    expect((await cli(['config', 'set', 'nosuch', '1'])).code).toBe(EXIT.usage)
  })

  it('--config-dir, --cache-dir and --data-dir override their variables, after any command', async () => {
    const dir = await tempDir()
    const path1 = await cli(['config', 'path', '--config-dir', path.join(dir, 'conf')])
    expect(path1.stdout.trim()).toBe(path.join(dir, 'conf', 'config.json'))
    expect((await cli(['config', 'set', 'days', '5', '--config-dir', path.join(dir, 'conf')])).code).toBe(0)
    expect(JSON.parse(await readFile(path.join(dir, 'conf', 'config.json'), 'utf8'))).toEqual({ days: 5 })
    const shown = jsonOf<{ folders: Record<string, string>; settings: Record<string, { value: unknown; source: string }> }>(
      await cli(['config', '--json', '--config-dir', path.join(dir, 'conf'), '--cache-dir', path.join(dir, 'cache'), '--data-dir', path.join(dir, 'data')]))
    expect(shown.settings.days).toMatchObject({ value: 5, source: 'file' })
    expect(shown.folders).toMatchObject({ config: path.join(dir, 'conf'), cache: path.join(dir, 'cache'), data: path.join(dir, 'data') })
    // A fresh config folder holds no session.
    expect((await cli(['inbox', '--config-dir', path.join(dir, 'conf')])).code).toBe(EXIT.auth)
  })

  it('completion scripts: bash is valid bash and completes commands and flags; an unknown shell is a usage error', async () => {
    const r = await cli(['completion', 'bash'])
    expect(r.code).toBe(0)
    const dir = await tempDir()
    const script = path.join(dir, 'c.bash')
    await writeFile(script, r.stdout)
    const { stdout } = await promisify(execFile)('bash', ['-c',
      `source ${script}; COMP_WORDS=(transferfs dow); COMP_CWORD=1; _transferfs; echo "\${COMPREPLY[@]}"; ` +
      `COMP_WORDS=(transferfs download --z); COMP_CWORD=2; _transferfs; echo "\${COMPREPLY[@]}"; ` +
      `COMP_WORDS=(transferfs config set api-u); COMP_CWORD=3; _transferfs; echo "\${COMPREPLY[@]}"`])
    expect(stdout.split('\n').slice(0, 3)).toEqual(['download', '--zip', 'api-url'])
    const zsh = await cli(['completion', 'zsh'])
    expect(zsh.stdout.startsWith('#compdef transferfs')).toBe(true)
    expect(zsh.stdout).toContain("'--include-expired[also list expired transfers]'")
    // Run by zsh itself, with its completion helpers replaced by ones that print what they are given.
    const zfile = path.join(dir, '_transferfs')
    await writeFile(zfile, zsh.stdout)
    await promisify(execFile)('zsh', ['-n', zfile])
    const z = await promisify(execFile)('zsh', ['-fc',
      `_describe() { print -rl -- "\${(@P)\${@[-1]}}" }; _arguments() { shift; print -rl -- "$@" }; ` +
      `words=(transferfs ''); CURRENT=2; source ${zfile}; print -- ---; ` +
      `words=(transferfs download --z); CURRENT=3; source ${zfile}`])
    const [described, specs] = z.stdout.split('---\n') as [string, string]
    expect(described).toMatch(/^download:Download every file/m)
    expect(described).toMatch(/^send:Send files and folders/m)
    expect(specs).toMatch(/^--zip\[/m)
    expect(specs).toMatch(/^\(-o --output\)--output\[/m)
    expect(described).toMatch(/^info:A transfer’s details/m)
    expect((await cli(['completion', 'fish'])).code).toBe(EXIT.usage)
  })
})
