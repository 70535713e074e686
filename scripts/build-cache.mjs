// The build cache: what the package builds and their tests fetch or make once per machine and
// then reuse (the Node runtime of another architecture, cross-built addons, libfuse 3.17, Debian
// roots), each under a name that says what it was made of. build-libfuse3.sh uses the same
// folder: ${XDG_CACHE_HOME:-~/.cache}/transferfs-build.
import os from 'node:os'
import path from 'node:path'

export function buildCache() {
  return path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'transferfs-build')
}
