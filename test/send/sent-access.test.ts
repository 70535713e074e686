import { chmod, mkdir, mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { JournalFile } from '../../src/send/journal.js'
import { entryReaders, localReaders, shownPerm } from '../../src/send/sent-access.js'

const file = (name: string, rel: string): JournalFile => ({ name, rel, size: 1, md5: '' })

describe('an outbox entry\'s readers, taken when its send\'s files are fixed', () => {
  it('a file entry: its own mode and its recipient folder\'s', () => {
    const modes = new Map([['/a@b.com', 0o755], ['/a@b.com/report.pdf', 0o600], ['/note.txt', 0o644], ['/c@d.com', 0o700], ['/c@d.com/x.txt', 0o644]])
    const permOf = (p: string, isDir: boolean): number => modes.get(p) ?? shownPerm(undefined, isDir ? 'dir' : 'file')
    expect(entryReaders('/a@b.com/report.pdf', [file('report.pdf', '')], permOf)).toEqual({ 'report.pdf': 0 })
    expect(entryReaders('/note.txt', [file('note.txt', '')], permOf)).toEqual({ 'note.txt': 0o044 })
    expect(entryReaders('/c@d.com/x.txt', [file('x.txt', '')], permOf)).toEqual({ 'x.txt': 0 })
  })

  it('a folder entry: each file through every folder above it, by its name in the transfer', () => {
    const modes = new Map([['/private', 0o700], ['/shared', 0o755], ['/shared/team', 0o750], ['/shared/mine.txt', 0o600]])
    const permOf = (p: string, isDir: boolean): number => modes.get(p) ?? shownPerm(undefined, isDir ? 'dir' : 'file')
    expect(entryReaders('/private', [file('s.txt', 's.txt')], permOf)).toEqual({ 's.txt': 0 })
    expect(entryReaders('/shared', [file('open.txt', 'open.txt'), file('mine.txt', 'mine.txt'), file('team/plan.txt', 'team/plan.txt')], permOf))
      .toEqual({ 'open.txt': 0o044, 'mine.txt': 0, 'team/plan.txt': 0o040 })
  })

  it('a path without a mode of its own shows its kind\'s default', () => {
    expect([shownPerm(undefined, 'dir'), shownPerm(undefined, 'file'), shownPerm(undefined, 'link'), shownPerm(0o600, 'file')]).toEqual([0o755, 0o644, 0o777, 0o600])
  })
})

describe('files sent straight from the disk (transferfs send)', () => {
  it('each file\'s readers, through every folder above it up to the root', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'transferfs-readers-'))
    await chmod(root, 0o755)
    await mkdir(path.join(root, 'closed'), { mode: 0o700 })
    const put = async (rel: string, mode: number): Promise<{ name: string; path: string }> => {
      await writeFile(path.join(root, rel), 'x')
      await chmod(path.join(root, rel), mode)
      return { name: rel, path: path.join(root, rel) }
    }
    const files = [await put('open.txt', 0o644), await put('mine.txt', 0o600), await put('closed/in.txt', 0o644)]
    // The temporary folder's own parents (/tmp is 1777) let everyone search through.
    expect(await localReaders(files)).toEqual({ 'open.txt': 0o044, 'mine.txt': 0, 'closed/in.txt': 0 })
  })
})
