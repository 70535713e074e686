import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { configDefaults, defineConfig } from 'vitest/config'

// Where a test runs is decided by its folder (docs/testing.md says why, with the timings):
// - test/fuse/: what depends on the FUSE library (FUSE ops, readahead, read windows, errno,
//   the mount's life, what one libfuse version does that another does not) runs on each
//   library: in auto (the library the mount picks: libfuse 3), libfuse2 and libfuse3.17.
// - test/normal-user/: a normal user mounts through the setuid helper, whose use differs by
//   library: auto and libfuse2 (libfuse3.17 cannot reach that user; test/fuse/libfuse3.17.test.ts
//   mounts as the user itself).
// - test/package/: builds the product from a clean copy (one build shared by the run,
//   test/support/clean-build.ts): the project `package`, in a group of its own that runs before
//   the others, so a build never shares the cores with a test that measures time.
// - everything else runs once, in auto: the network, the service's faults, keeping, sending,
//   the tools, search, previews give the same result on any FUSE library; test/nfs/ (the NFS
//   server, driven by libnfs and the kernel's NFS client) involves no FUSE library at all.
export const EACH_LIBRARY = ['test/fuse/**/*.test.ts']
export const EACH_LIBRARY_BUT_3_17 = ['test/normal-user/**/*.test.ts']
export const BUILDS_THE_PACKAGE = ['test/package/**/*.test.ts']

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

// Workers, measured on the 2-core machine (docs/testing.md): two files side by side take
// about half the wall time of one at a time, since most of a mount test waits on timers, a
// throttled link or the service; the builds get a group of their own instead.
const WORKERS = 2
/** Groups run one after the other; the projects of one group run together. */
const BUILD_GROUP = 0
const TEST_GROUP = 1

export default defineConfig({
  test: {
    // Native code (fuse-native) must load in forked processes, not worker threads.
    pool: 'forks',
    // Real tools (cp, rsync, tar) run against a real local service: generous timeouts.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // A worker whose teardown hangs (a mount that does not let go) is given up on, not waited for.
    teardownTimeout: 30_000,
    fileParallelism: true,
    maxWorkers: WORKERS,
    // hanging-process: when the run does not end, it says what keeps it alive. The progress
    // reporter writes what starts and ends for .ci/run, which names what still runs at its limit.
    reporters: ['default', 'hanging-process', ...(process.env.TRANSFERFS_TEST_PROGRESS ? [path.join(ROOT, 'test/support/progress-reporter.ts')] : [])],
    projects: [
      {
        extends: true,
        test: {
          name: 'auto',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, LIBFUSE3_17_TEST, ...BUILDS_THE_PACKAGE],
          sequence: { groupOrder: TEST_GROUP },
        },
      },
      {
        extends: true,
        test: {
          name: 'libfuse2',
          include: [...EACH_LIBRARY, ...EACH_LIBRARY_BUT_3_17],
          exclude: [...configDefaults.exclude, LIBFUSE3_17_TEST],
          env: { TRANSFERFS_FUSE_LIBRARY: 'libfuse2' },
          sequence: { groupOrder: TEST_GROUP },
        },
      },
      // The normal user's commands get a clean environment, without LD_LIBRARY_PATH, and cannot
      // read root's cache: test/normal-user would mount with the system's libfuse there.
      { extends: true, test: { name: 'libfuse3.17', include: EACH_LIBRARY, env: libfuse317Env, sequence: { groupOrder: TEST_GROUP } } },
      // The packages these tests build are compressed with xz -1, not dpkg-deb's default -6: the
      // same files, control data and format, and about a sixth of the CPU (xz -6 of the ~90 MiB
      // a package holds is ~50 CPU-s a build, and the group builds three or four times on two
      // cores). What a release compresses with is dpkg-deb's default, untouched.
      { extends: true, test: { name: 'package', include: BUILDS_THE_PACKAGE, env: { DPKG_DEB_COMPRESSOR_LEVEL: '1' }, sequence: { groupOrder: BUILD_GROUP } } },
    ],
  },
})
