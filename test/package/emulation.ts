// arm64 programs run on this (amd64) machine through qemu-user, which the kernel starts for
// them by their ELF header (binfmt_misc), as Debian's qemu-user-static and binfmt-support set
// it up. The registration lives in the kernel only: after a reboot (every CI machine starts
// that way) it is made again here, before an arm64 root is made or entered. Two flags matter:
// F (qemu opened once, at registration) lets the kernel start qemu for a program inside a
// chroot, whose own files have no qemu; C (credentials from the program, not from qemu) lets a
// setuid program there run as its owner, as it does on an arm64 machine: fusermount3, which a
// normal user's mount needs. Debian registers qemu without C; it is registered again here with
// it, the same interpreter, magic and mask otherwise (until the next reboot).
import { existsSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { explain, host } from './apt-repository.js'

const BINFMT = '/proc/sys/fs/binfmt_misc'
const ENTRY = 'qemu-aarch64'

export interface Emulation {
  /** The program the kernel starts for an arm64 one. */
  interpreter: string
  flags: string
}

async function entry(): Promise<Emulation & { enabled: boolean; magic: string; mask: string }> {
  const text = await readFile(`${BINFMT}/${ENTRY}`, 'utf8')
  const field = (re: RegExp): string => re.exec(text)?.[1] ?? ''
  return {
    enabled: /^enabled$/m.test(text), interpreter: field(/^interpreter (.+)$/m), flags: field(/^flags: (.*)$/m),
    magic: field(/^magic ([0-9a-f]+)$/m), mask: field(/^mask ([0-9a-f]+)$/m),
  }
}

/** Registers qemu-aarch64 with binfmt_misc, with the flags F and C (needs root); its entry. */
export async function ensureArm64Emulation(): Promise<Emulation> {
  if (!existsSync(`${BINFMT}/register`)) {
    const mounted = await host('mount', ['-t', 'binfmt_misc', 'binfmt_misc', BINFMT])
    if (mounted.code !== 0) throw new Error(explain('mount -t binfmt_misc (the kernel\'s way to run arm64 programs through qemu)', mounted))
  }
  if (!existsSync(`${BINFMT}/${ENTRY}`)) {
    // binfmt-support's record of qemu-user-static's format, put into the kernel.
    const enabled = await host('update-binfmts', ['--enable', ENTRY])
    if (enabled.code !== 0) throw new Error(explain(`update-binfmts --enable ${ENTRY} (packages qemu-user-static and binfmt-support)`, enabled))
  }
  let e = await entry()
  if (!e.flags.includes('F') || !e.flags.includes('C')) {
    const bytes = (hex: string): string => hex.replace(/../g, '\\x$&')
    // C implies O (the kernel hands qemu the program open); P keeps the program's own argv[0].
    const flags = [...new Set(`${e.flags}FC`.replace('O', ''))].join('')
    await writeFile(`${BINFMT}/${ENTRY}`, '-1')
    await writeFile(`${BINFMT}/register`, `:${ENTRY}:M:0:${bytes(e.magic)}:${bytes(e.mask)}:${e.interpreter}:${flags}`)
    e = await entry()
  }
  if (!e.enabled) throw new Error(`${BINFMT}/${ENTRY} is registered but disabled`)
  if (!e.flags.includes('F') || !e.flags.includes('C')) throw new Error(`${BINFMT}/${ENTRY} has the flags "${e.flags}", not F and C`)
  return { interpreter: e.interpreter, flags: e.flags }
}
