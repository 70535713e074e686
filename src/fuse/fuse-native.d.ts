// Types for fuse-native 2.2.6 as our patch leaves it (pinned: we override its private _fuseOptions and xattr handlers).
declare module 'fuse-native' {
  type Signal = (code: number, ...results: unknown[]) => void

  namespace Fuse {
  interface FuseOps {
    [op: string]: ((...args: any[]) => void) | undefined
  }

  interface FuseTimeouts {
    default?: number
    [op: string]: number | false | undefined
  }

  interface FuseOptions {
    displayFolder?: boolean
    debug?: boolean
    force?: boolean
    mkdir?: boolean
    allowOther?: boolean
    allowRoot?: boolean
    autoUnmount?: boolean
    defaultPermissions?: boolean
    maxRead?: number
    fsname?: string
    subtype?: string
    kernelCache?: boolean
    autoCache?: boolean
    umask?: number
    uid?: number
    gid?: number
    entryTimeout?: number
    attrTimeout?: number
    acAttrTimeout?: number
    noforget?: boolean
    timeout?: number | false | FuseTimeouts
    /** Given to the kernel in the INIT reply (our patch). */
    maxBackground?: number
    congestionThreshold?: number
  }
  }

  class Fuse {
    constructor(mnt: string, ops: Fuse.FuseOps, opts?: Fuse.FuseOptions)
    readonly mnt: string
    readonly ops: Fuse.FuseOps
    readonly opts: Fuse.FuseOptions
    mount(cb: (err: Error | null) => void): void
    unmount(cb: (err: (Error & { unmountFailure?: boolean }) | null) => void): void
    /** Read windows (our patch): bytes of the file open as fh from `start` that libfuse's threads answer reads from; false when all are in use. */
    lendWindow(fh: number, start: number, bytes: Buffer): boolean
    /** Takes the window of fh from `start` back (-1: every window of fh) once no libfuse thread copies from it; true when there was one. */
    withdrawWindow(fh: number, start: number): boolean
    /** Reads libfuse's threads answered from windows since the mount. */
    windowReads(): number
    _fuseOptions(): string
    _op_getxattr(signal: Signal, path: string, name: string, valueBuf: Buffer, position: number): void
    _op_listxattr(signal: Signal, path: string, listBuf: Buffer): void
    static unmount(mnt: string, cb: (err: Error | null) => void): void
    static readonly EPERM: number
    static readonly ENOENT: number
    static readonly EIO: number
    static readonly EACCES: number
    static readonly ERANGE: number
    static readonly ENODATA: number
    static readonly EOPNOTSUPP: number
    static readonly ETIMEDOUT: number
  }

  export = Fuse
}
