// The architectures transferfs is packaged for, by Debian's name, with what each part of the
// build calls them: Node's process.arch (prebuilds/linux-<node>/), the GNU triplet of Debian's
// cross toolchain and multiarch folders (/usr/lib/<triplet>/), and the ELF machine number the
// built binaries must carry.

/** @typedef {{ debian: string, node: string, triplet: string, elfMachine: number, elfName: string }} Architecture */

/** @type {Record<string, Architecture>} */
export const ARCHITECTURES = {
  amd64: { debian: 'amd64', node: 'x64', triplet: 'x86_64-linux-gnu', elfMachine: 62, elfName: 'x86-64' },
  arm64: { debian: 'arm64', node: 'arm64', triplet: 'aarch64-linux-gnu', elfMachine: 183, elfName: 'AArch64' },
}

/** The architecture this build runs on. */
export function hostArchitecture() {
  const found = Object.values(ARCHITECTURES).find((a) => a.node === process.arch)
  if (!found) throw new Error(`transferfs is packaged on ${Object.values(ARCHITECTURES).map((a) => a.node).join(' or ')}, not ${process.arch}`)
  return found
}

/** The architecture Debian calls `name`, or an error naming those there are. */
export function architecture(name) {
  const found = ARCHITECTURES[name]
  if (!found) throw new Error(`no architecture ${name}: transferfs is packaged for ${Object.keys(ARCHITECTURES).join(' and ')}`)
  return found
}

/** The ELF machine number of an ELF file's bytes (its header's e_machine), or null when they are not a 64-bit little-endian ELF. */
export function elfMachine(bytes) {
  if (bytes.length < 20 || bytes.readUInt32BE(0) !== 0x7f454c46 || bytes[4] !== 2 || bytes[5] !== 1) return null
  return bytes.readUInt16LE(18)
}
