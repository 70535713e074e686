// What the running mount does for `transferfs pin`, `unpin` and `free` (cli/pin.ts) asked
// through its control socket (cli/control.ts): the request and its answer, and each path, on
// the mount, to the node it names and to the pinner; one failing path does not stop the others.
// The request's shape lives here, with what answers it, so that the socket above imports it
// and this room imports nothing of the command line.
import { realpath } from 'node:fs/promises'
import path from 'node:path'
import { formatBytes } from '../base/format-bytes.js'
import { FsError } from '../vfs/core.js'
import type { TransferFileSystem } from '../vfs/filesystem.js'
import type { Pinner } from './pinner.js'

/** What a command asks of the mount's pins. */
export type ControlOp = 'pin' | 'unpin' | 'free'

export interface ControlRequest {
  op: ControlOp
  /** Absolute paths on the mount. */
  paths: string[]
}

export interface ControlResult {
  path: string
  ok: boolean
  /** What happened, for the user: one line. */
  message: string
  /** errno's name when it failed (ENOSPC, ENOENT, EINVAL...). */
  code?: string
}

/** What the mount does for a control request: each path's result, one failing not stopping the others. */
export function pinControl(core: TransferFileSystem, pinner: Pinner, mountDir: string): (req: ControlRequest) => Promise<ControlResult[]> {
  const root = realpath(mountDir).catch(() => mountDir)
  return async (req) => {
    const results: ControlResult[] = []
    for (const p of req.paths) {
      const rel = path.relative(await root, p)
      if (rel.startsWith('..') || path.isAbsolute(rel)) {
        results.push({ path: p, ok: false, code: 'EINVAL', message: `${p} is not on the transferfs mount at ${mountDir}` })
        continue
      }
      try {
        const target = await core.pinTargetAt(`/${rel}`)
        if (req.op === 'free') {
          const freed = await pinner.free(target)
          results.push({ path: p, ok: true, message: `freed ${formatBytes(freed)} of ${target.label}` })
        } else if (req.op === 'pin') {
          await pinner.pin(target)
          const pin = pinner.pinOf(target.scope)
          const size = pin?.files.reduce((n, f) => n + f.size, 0) ?? 0
          results.push({ path: p, ok: true, message: `pinned ${target.label}: ${pin?.files.length ?? 0} files, ${formatBytes(size)}, fetched in the background (\`transferfs status\` shows how far)` })
        } else {
          const was = pinner.isPinned(target.scope)
          await pinner.unpin(target)
          results.push({ path: p, ok: true, message: was ? `unpinned ${target.label}` : `${target.label} was not pinned` })
        }
      } catch (e) {
        // A pin whose path leads nowhere now (its transfer deleted) is still unpinned by that path.
        if (req.op === 'unpin' && e instanceof FsError && e.code === 'ENOENT' && (await pinner.unpinLabel(rel))) {
          results.push({ path: p, ok: true, message: `unpinned ${rel}` })
          continue
        }
        const code = e instanceof FsError ? e.code : undefined
        const why = e instanceof FsError && e.message === e.code ? describe(e.code) : (e as Error).message
        results.push({ path: p, ok: false, ...(code ? { code } : {}), message: code === 'ENOSPC' ? `No space left on device: ${why}` : `${p}: ${why}` })
      }
    }
    return results
  }
}

function describe(code: string): string {
  switch (code) {
    case 'ENOENT': return 'no such file or folder'
    case 'EIO': return 'the service could not be asked'
    default: return code
  }
}
