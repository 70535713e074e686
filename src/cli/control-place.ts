// Where the running mount's control socket is, and the checks that make it its owner's alone.
//
// The socket is always `control.sock` in the data folder, a folder of the owner's own (the
// mount keeps it 0700). Never in a shared folder such as /tmp: there another local user can
// make the socket's name first, listen, and be asked (and answer) in the mount's place. A
// data folder whose path is too long for a socket address (108 bytes) is reached through an
// open descriptor of it, `/proc/self/fd/N/control.sock`: the kernel resolves that to the
// same folder, so the socket stays where its owner's other files are, however deep.
//
// Both ends check before they use it: the data folder is opened once and checked through
// that descriptor (a directory, owned by this user, writable by no one else), so no other
// user can put or swap a socket in it; the client then checks that the socket is a socket
// of this user's. The socket is 0600 besides, so only its owner (and root) may connect.
// Node has no call for the peer's credentials (SO_PEERCRED), so the server does not ask who
// connected: the folder and the socket's mode are what keep everyone else out.
import { constants, existsSync } from 'node:fs'
import { lstat, open, type FileHandle } from 'node:fs/promises'
import path from 'node:path'

export const CONTROL_SOCKET = 'control.sock'

/** Bytes of a Unix socket's path at most (sun_path is 108 bytes with its terminating zero). */
const SOCKET_PATH_MAX = 107

/** The data folder, held open, and its control socket's address. */
export interface ControlPlace {
  /** The socket's path as people know it (messages). */
  readonly file: string
  /** The path to bind or connect: `file`, or the same through the folder's descriptor when `file` is too long. */
  readonly address: string
  /** Checks the folder again (the server does after binding): throws why it is not this user's alone. */
  checkFolder(): Promise<void>
  /** Lets the folder go (after the server has closed: it removes the socket through `address`). */
  close(): Promise<void>
}

/** The user this process acts as: the one the socket and its folder must belong to. */
function ownUid(): number {
  return process.geteuid?.() ?? -1
}

/**
 * Opens the data folder and checks it is this user's alone to write: a folder (not a link to
 * one, once opened), owned by this user, not writable by group or others. Throws a clear
 * error otherwise (ENOENT's code kept, for "not mounted").
 */
export async function openControlPlace(dataDir: string): Promise<ControlPlace> {
  const file = path.join(dataDir, CONTROL_SOCKET)
  let dir: FileHandle
  try {
    dir = await open(dataDir, constants.O_RDONLY | constants.O_DIRECTORY)
  } catch (e) {
    const err = e as NodeJS.ErrnoException
    if (err.code === 'ENOTDIR') throw new Error(`the data folder ${dataDir} is not a folder`)
    throw err
  }
  try {
    await checkFolder(dir, dataDir)
    const address = Buffer.byteLength(file) <= SOCKET_PATH_MAX ? file : throughDescriptor(dir.fd, dataDir)
    return { file, address, checkFolder: () => checkFolder(dir, dataDir), close: () => dir.close() }
  } catch (e) {
    await dir.close()
    throw e
  }
}

/** The folder, through its open descriptor, is this user's alone to write in; throws why not. */
async function checkFolder(dir: FileHandle, dataDir: string): Promise<void> {
  const st = await dir.stat()
  const uid = ownUid()
  if (st.uid !== uid) {
    throw new Error(`the data folder ${dataDir} belongs to uid ${st.uid}, not to you (uid ${uid}): its control socket is not yours to use`)
  }
  if ((st.mode & 0o022) !== 0) {
    throw new Error(`the data folder ${dataDir} may be written by others (mode ${(st.mode & 0o777).toString(8)}): its control socket could be anyone's; \`chmod 700 ${dataDir}\``)
  }
}

/** The socket at place is a socket of this user's; throws why not (ENOENT's code kept, for "not mounted"). */
export async function checkSocket(place: ControlPlace): Promise<void> {
  const st = await lstat(place.address)
  const uid = ownUid()
  if (!st.isSocket()) throw new Error(`${place.file} is not a socket: not a transferfs mount's; remove it`)
  if (st.uid !== uid) throw new Error(`${place.file} belongs to uid ${st.uid}, not to you (uid ${uid}): refusing to talk to it; remove it`)
}

function throughDescriptor(fd: number, dataDir: string): string {
  const viaFd = `/proc/self/fd/${fd}`
  if (!existsSync(viaFd)) {
    throw new Error(`the data folder's path ${dataDir} is too long for a socket (${SOCKET_PATH_MAX} bytes at most) and /proc is not mounted to reach it another way: use a shorter --data-dir`)
  }
  return `${viaFd}/${CONTROL_SOCKET}`
}
