import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { configDefaults, defineConfig } from 'vitest/config'

// Native code (fuse-native) must load in forked processes, not worker threads.
// FUSE tests mount real file systems: they run one file at a time so two mounts
// never compete for the two cores, and every test has a generous timeout
// because real tools (cp, rsync, tar) run against a real local service.
// The mount runs on libfuse 3 or libfuse 2: the whole suite runs with the library the mount
// picks by itself (libfuse 3 where both are installed), and the tests that mount run once
// more on libfuse 2, and once more on libfuse 3.17 (below).
const MOUNT_TESTS = ['test/fuse/**/*.test.ts', 'test/mount/**/*.test.ts', 'test/send-mount/**/*.test.ts', 'test/normal-user/**/*.test.ts']

// libfuse 3.17 moved to the soname libfuse3.so.4 (Debian 13), for which the package ships an
// addon of its own. Where the system's libfuse 3 is older, scripts/build-libfuse3.sh builds
// 3.17 from Debian's source into a prefix (the bootstrap of `npm test` runs it, --cached only
// looks), and the project libfuse3.17 runs the tests that mount with that prefix on the
// loader's path. The loader reads LD_LIBRARY_PATH once, when a process starts: a project's
// env is given to the forked worker when it is started (and to what the tests start from it),
// so it is there in time. test/fuse/libfuse3.17.test.ts checks that the mounts really use it.
const ROOT = path.dirname(fileURLToPath(import.meta.url))
const LIBFUSE3_17 = spawnSync('bash', [path.join(ROOT, 'scripts/build-libfuse3.sh'), '--cached'], { encoding: 'utf8' }).stdout?.trim() ?? ''
const LIBFUSE3_17_TEST = 'test/fuse/libfuse3.17.test.ts'
const libfuse317Env: Record<string, string> = {
  TRANSFERFS_FUSE_LIBRARY: 'libfuse3',
  // Empty when not built: test/fuse/libfuse3.17.test.ts then fails, saying what to run.
  TRANSFERFS_TEST_LIBFUSE3_17: LIBFUSE3_17,
  ...(LIBFUSE3_17 ? { LD_LIBRARY_PATH: [path.join(LIBFUSE3_17, 'lib'), process.env.LD_LIBRARY_PATH].filter(Boolean).join(':') } : {}),
}
// The normal user's commands get a clean environment, without LD_LIBRARY_PATH, and cannot read
// root's cache: test/normal-user would mount with the system's libfuse there. The libfuse 3.17
// check mounts as that user itself, with a copy of the library the user can read.
const LIBFUSE3_17_TESTS = [...MOUNT_TESTS.filter((t) => !t.startsWith('test/normal-user/')), LIBFUSE3_17_TEST]

export default defineConfig({
  test: {
    pool: 'forks',
    testTimeout: 120_000,
    hookTimeout: 120_000,
    fileParallelism: true,
    maxWorkers: 2,
    reporters: ['default'],
    projects: [
      { extends: true, test: { name: 'auto', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, LIBFUSE3_17_TEST] } },
      { extends: true, test: { name: 'libfuse2', include: MOUNT_TESTS, exclude: [...configDefaults.exclude, LIBFUSE3_17_TEST], env: { TRANSFERFS_FUSE_LIBRARY: 'libfuse2' } } },
      { extends: true, test: { name: 'libfuse3.17', include: LIBFUSE3_17_TESTS, env: libfuse317Env } },
    ],
  },
})
