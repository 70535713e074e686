// Under an address-space limit (ulimit -v) V8 cannot reserve WebAssembly memory at all, and
// the read path's block buffers and block check live in it: the command line still runs,
// and the read path refuses at start with a message that names the cause. Run for real in
// a child process with the limit set.
import { execFile } from 'node:child_process'
import path from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { REPO, TS_REGISTER } from '../support/mount.js'

const run = promisify(execFile)
/** 8 GB of address space: plenty for Node, less than one WebAssembly memory's reservation. */
const LIMIT_KB = 8_000_000

function limited(args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run('bash', ['-c', `ulimit -v ${LIMIT_KB}; exec "$@"`, 'limited', process.execPath, '--import', TS_REGISTER, ...args], { cwd: REPO })
}

describe('an address-space limit', () => {
  it('leaves the command line working and makes the read path say why it cannot start', async () => {
    const { stdout } = await limited([path.join(REPO, 'src/cli/main.ts'), '--version'])
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+/)
    const script = `
      import { ReadPath } from ${JSON.stringify(path.join(REPO, 'src/read/content.ts'))}
      try {
        await ReadPath.create({ streamRange: async () => {}, rangeHash: async () => '' })
        console.log('created')
      } catch (e) {
        console.log('refused: ' + e.message)
      }`
    const { stdout: out } = await limited(['--input-type=module', '-e', script])
    expect(out).toMatch(/^refused: .*ulimit -v/)
  })
})
