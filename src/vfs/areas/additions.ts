// `sent/` with sending wired in: the service's sent transfers (sent.ts), with files copied
// into a transfer's folder staged in a tree of their own (an OutboxFs whose top-level
// folders are transfer ids) and shown over the transfer's files until they are added;
// `sent/<folder>/.forward` is write-only (addresses, one per line, forwarded as written).
import { constants as C } from 'node:fs'
import { STATE_XATTR, type PinTarget } from '../pinning.js'
import { FsError, type NodeAttr, type OpenFlags } from '../core.js'
import type { MetadataStore } from '../metadata.js'
import { O_ACCMODE, spliced, splitPath, writeOnly, type Area, type Names, type OpenNode } from './area.js'
import { stagedNode, stagedState, type SendingParts, type StagingTree } from './staging.js'
import { sendSummaryText } from '../state-words.js'
import type { TransferArea } from './transfers.js'

const FORWARD_FILE = '.forward'
/** bytes: the longest address list a `.forward` handle takes. */
const MAX_FORWARD_BYTES = 64 * 1024

/** The path is not there (ENOENT, or a file where a folder was expected). */
function isMissingPath(err: unknown): boolean {
  return err instanceof FsError && (err.code === 'ENOENT' || err.code === 'ENOTDIR')
}

/** Addresses from what was written to `.forward`: one per line (commas and blanks split too). */
export function parseAddresses(text: string): string[] {
  return text.split(/[\n,;\s]+/).map((s) => s.trim()).filter((s) => s !== '')
}

/** A name below sent/: a transfer folder (`rest` empty), something in one, or its `.forward`. */
type Below =
  | { at: 'listing' }
  | { at: 'forward'; folder: string }
  | { at: 'transfer'; folder: string; rest: readonly string[] }

function below(names: Names): Below {
  const [folder, ...rest] = names
  if (folder === undefined) return { at: 'listing' }
  if (rest.length === 1 && rest[0] === FORWARD_FILE) return { at: 'forward', folder }
  return { at: 'transfer', folder, rest }
}

export class SentWithAdditions implements Area {
  private readonly additions: StagingTree

  constructor(
    private readonly remote: TransferArea,
    private readonly store: MetadataStore,
    private readonly parts: SendingParts,
  ) {
    this.additions = parts.additions
  }

  // ---- where a sent folder's paths are staged ----------------------------------------------

  private async transferIdOf(folder: string): Promise<string> {
    const entry = (await this.store.sent()).byName.get(folder)
    if (!entry || entry.ref.via !== 'id') throw new FsError('ENOENT')
    return entry.ref.token
  }

  /** The staged path of a name in a transfer's folder: `/<transfer id>/<rest>`. */
  private async staged(folder: string, rest: readonly string[]): Promise<string> {
    return `/${await this.transferIdOf(folder)}/${rest.join('/')}`
  }

  /** The staged path exists? */
  private async isStaged(p: string): Promise<boolean> {
    try {
      await this.additions.getattr(p)
      return true
    } catch (err) {
      if (isMissingPath(err)) return false
      throw err
    }
  }

  /** Makes the transfer's staging folder and every parent folder of `p` (a staged path). */
  private async stageParents(p: string): Promise<void> {
    const parts = splitPath(p)
    for (let i = 1; i < parts.length; i++) {
      const dir = '/' + parts.slice(0, i).join('/')
      if (await this.isStaged(dir)) continue
      await this.additions.mkdir(dir, 0o755).catch((err: unknown) => {
        if (!(err instanceof FsError && err.code === 'EEXIST')) throw err
      })
    }
  }

  /** Where something made in a transfer's folder is staged; only there can anything be made (EROFS). */
  private async stagedForNew(names: Names): Promise<string> {
    const w = below(names)
    if (w.at !== 'transfer' || w.rest.length === 0) throw new FsError('EROFS')
    return this.staged(w.folder, w.rest)
  }

  /** The staged path of a name inside a transfer's folder when it is staged, else null. */
  private async stagedIn(names: Names): Promise<string | null> {
    const w = below(names)
    if (w.at !== 'transfer' || w.rest.length === 0) return null
    const p = await this.staged(w.folder, w.rest)
    return (await this.isStaged(p)) ? p : null
  }

  /** The op on the staged file when there is one, else `elsewhere` (the service's side). */
  private async local<T>(names: Names, op: (p: string) => Promise<T>, elsewhere: () => Promise<T>): Promise<T> {
    const p = await this.stagedIn(names)
    return p !== null ? op(p) : elsewhere()
  }

  // ---- reading -------------------------------------------------------------------------------

  async getattr(names: Names): Promise<NodeAttr> {
    const w = below(names)
    if (w.at === 'forward') {
      const base = await this.remote.getattr([w.folder])
      return { ...base, mode: C.S_IFREG | 0o200, size: 0, nlink: 1 }
    }
    if (w.at === 'listing' || w.rest.length === 0) return this.remote.getattr(names)
    try {
      return await this.additions.getattr(await this.staged(w.folder, w.rest))
    } catch (err) {
      if (!isMissingPath(err)) throw err
      return this.remote.getattr(names)
    }
  }

  async readdir(names: Names, path: string): Promise<string[]> {
    const w = below(names)
    if (w.at === 'forward') throw new FsError('ENOTDIR')
    if (w.at === 'listing') return this.remote.readdir(names, path)
    const remote = await this.remote.readdir(names, path).catch((err: unknown) => {
      if (isMissingPath(err)) return null
      throw err
    })
    const local = await this.additions.readdir(await this.staged(w.folder, w.rest)).catch((err: unknown) => {
      if (isMissingPath(err)) return null
      throw err
    })
    if (remote === null && local === null) throw new FsError('ENOENT')
    const listed = new Set([...(remote ?? []), ...(local ?? [])])
    if (w.rest.length === 0) listed.add(FORWARD_FILE)
    return [...listed]
  }

  async readlink(names: Names): Promise<string> {
    const w = below(names)
    if (w.at !== 'transfer' || w.rest.length === 0) throw new FsError('EINVAL')
    return this.additions.readlink(await this.staged(w.folder, w.rest))
  }

  /**
   * A file being added answers its send's state (staging.ts stagedState); a transfer's folder
   * while files are being added to it, theirs summed up; otherwise what the service has answers
   * as in inbox/ (the pin and cache state: being in sent/ already says it is sent).
   */
  async getxattr(names: Names, name: string): Promise<Buffer> {
    const w = below(names)
    if (w.at === 'forward') throw new FsError('ENODATA')
    const p = await this.stagedIn(names)
    if (p !== null) {
      if (name !== STATE_XATTR) throw new FsError('ENODATA')
      const attr = await this.additions.getattr(p)
      return Buffer.from(stagedState(this.additions, p, (attr.mode & C.S_IFMT) === C.S_IFDIR), 'utf8')
    }
    if (name === STATE_XATTR && w.at === 'transfer' && w.rest.length === 0) {
      const adding = await this.addingTo(w.folder)
      if (adding !== null) return Buffer.from(adding, 'utf8')
    }
    return this.remote.getxattr(names, name)
  }

  async listxattr(names: Names): Promise<string[]> {
    if (below(names).at === 'forward') return []
    if ((await this.stagedIn(names)) !== null) return [STATE_XATTR]
    return this.remote.listxattr(names)
  }

  /**
   * The state of the files being added to a transfer's folder, summed up with the transfer's
   * own files as sent ("2 of 4 sent, 1 sending 40%, 1 failed"; its files as known now, never
   * asked of the service); null when none is being added.
   */
  private async addingTo(folder: string): Promise<string | null> {
    const id = await this.transferIdOf(folder)
    const adding = this.additions.sends().filter((s) => s.state !== 'done' && s.name.startsWith(id + '/'))
    if (adding.length === 0) return null
    const target = await this.remote.pinTarget([folder])
    return sendSummaryText(adding, (await target?.known())?.files.length ?? 0)
  }

  async setxattr(names: Names, name: string, value: Buffer): Promise<void> {
    // Nothing is stored, so cp -a and mv fall back to chmod.
    if (await this.isLocal(names)) throw new FsError('EOPNOTSUPP')
    return this.remote.setxattr(names, name, value)
  }

  async removexattr(names: Names, name: string): Promise<void> {
    if (await this.isLocal(names)) throw new FsError('EOPNOTSUPP')
    return this.remote.removexattr(names, name)
  }

  /** What pinning the node at `names` keeps (pinning.ts): only what the service has, not what is being added. */
  async pinTarget(names: Names): Promise<PinTarget | null> {
    if (await this.isLocal(names)) return null
    return this.remote.pinTarget(names)
  }

  /** Served from the staging (a `.forward`, or a file being added)? */
  private async isLocal(names: Names): Promise<boolean> {
    return below(names).at === 'forward' || (await this.stagedIn(names)) !== null
  }

  // ---- opening ---------------------------------------------------------------------------------

  async open(names: Names, flags: OpenFlags): Promise<OpenNode> {
    const w = below(names)
    const writing = (flags & O_ACCMODE) !== C.O_RDONLY
    if (w.at === 'forward') {
      if (!writing) throw new FsError('EACCES', '.forward is write-only')
      return this.forwardNode(await this.transferIdOf(w.folder))
    }
    if (w.at === 'transfer' && w.rest.length > 0) {
      const p = await this.staged(w.folder, w.rest)
      if (await this.isStaged(p)) return stagedNode(this.additions, p, await this.additions.open(p, flags))
      // The mount's own files of the transfer answer for themselves (`.password` takes a
      // password, the others are read-only): they are not the transfer's files to replace.
      const attr = writing ? await this.remote.replaceableAttr(names) : null
      if (attr) {
        // Overwriting a file of the transfer: the new bytes are staged and replace it once added.
        await this.stageParents(p)
        return stagedNode(this.additions, p, await this.additions.create(p, attr.mode & 0o7777 | 0o200))
      }
    }
    return this.remote.open(names, flags)
  }

  async create(names: Names, mode: number): Promise<OpenNode> {
    const p = await this.stagedForNew(names)
    await this.stageParents(p)
    return stagedNode(this.additions, p, await this.additions.create(p, mode))
  }

  /**
   * `.forward`: whole lines are forwarded as they are written, so a refusal (unknown
   * address, too many recipients) fails the write itself, which shells report (a failed
   * close they ignore); a last line without a newline goes on flush, the last op close()
   * waits for. `done`: bytes of `written` already forwarded.
   */
  private forwardNode(transferid: string): OpenNode {
    let written: Buffer = Buffer.alloc(0)
    let done = 0
    const forwardTo = async (end: number): Promise<void> => {
      const to = parseAddresses(written.subarray(done, end).toString('utf8'))
      done = end
      if (to.length > 0) await this.parts.forward(transferid, to)
    }
    return {
      read: writeOnly(FORWARD_FILE),
      write: async (data, position) => {
        written = spliced(written, data, position, MAX_FORWARD_BYTES)
        const lines = written.lastIndexOf(0x0a) + 1
        if (lines > done) await forwardTo(lines)
        return data.length
      },
      flush: async () => {
        if (written.length > done) await forwardTo(written.length)
      },
      ftruncate: async (size) => {
        written = written.subarray(0, Math.min(size, written.length))
        done = Math.min(done, written.length)
      },
      release: async () => undefined,
    }
  }

  // ---- changing --------------------------------------------------------------------------------

  truncate(names: Names, size: number): Promise<void> {
    // `echo a@b.c > .forward` truncates first: nothing to cut.
    if (below(names).at === 'forward') return Promise.resolve()
    return this.local(names, (p) => this.additions.truncate(p, size), () => this.remote.truncate(names, size))
  }

  unlink(names: Names): Promise<void> {
    return this.local(names, (p) => this.additions.unlink(p), readOnly)
  }

  rmdir(names: Names): Promise<void> {
    return this.local(names, (p) => this.additions.rmdir(p), readOnly)
  }

  async mkdir(names: Names, mode: number): Promise<void> {
    const p = await this.stagedForNew(names)
    const remote = await this.remote.getattr(names).then(() => true, (err: unknown) => {
      if (isMissingPath(err)) return false
      throw err
    })
    if (remote || (await this.isStaged(p))) throw new FsError('EEXIST')
    await this.stageParents(p)
    return this.additions.mkdir(p, mode)
  }

  async symlink(target: string, names: Names): Promise<void> {
    const p = await this.stagedForNew(names)
    await this.stageParents(p)
    return this.additions.symlink(target, p)
  }

  async rename(from: Names, to: Names): Promise<void> {
    const a = below(from)
    const b = below(to)
    if (a.at !== 'transfer' || b.at !== 'transfer') throw new FsError('EROFS')
    if (a.rest.length > 0 && b.rest.length > 0) {
      const ia = await this.transferIdOf(a.folder)
      const ib = await this.transferIdOf(b.folder)
      const pa = `/${ia}/${a.rest.join('/')}`
      const pb = `/${ib}/${b.rest.join('/')}`
      if (await this.isStaged(pa)) {
        // Each transfer's additions are sent on their own: a staged file stays in its transfer.
        if (ia !== ib) throw new FsError('EXDEV')
        await this.stageParents(pb)
        return this.additions.rename(pa, pb)
      }
    }
    // Anything else in sent/ is the service's: `mv` copies (and removing the source fails).
    throw new FsError('EXDEV')
  }

  // ---- metadata: a transfer's folder itself takes what cp -a and rsync -a set, and keeps none --

  chmod(names: Names, mode: number): Promise<void> {
    if (names.length === 1) return Promise.resolve()
    return this.local(names, (p) => this.additions.chmod(p, mode), readOnly)
  }

  chown(names: Names, uid: number, gid: number): Promise<void> {
    if (names.length === 1) return Promise.resolve()
    return this.local(names, (p) => this.additions.chown(p, uid, gid), readOnly)
  }

  utimens(names: Names, atime: Date | null, mtime: Date | null): Promise<void> {
    if (names.length === 1) return Promise.resolve()
    return this.local(names, (p) => this.additions.utimens(p, atime, mtime), readOnly)
  }
}

async function readOnly(): Promise<never> {
  throw new FsError('EROFS')
}
