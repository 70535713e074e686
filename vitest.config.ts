import { defineConfig } from 'vitest/config'

// Native code (fuse-native) must load in forked processes, not worker threads.
// FUSE tests mount real file systems: they run one file at a time so two mounts
// never compete for the two cores, and every test has a generous timeout
// because real tools (cp, rsync, tar) run against a real local service.
// The mount runs on libfuse 3 or libfuse 2: the whole suite runs with the library the mount
// picks by itself (libfuse 3 where both are installed), and the tests that mount run once
// more on libfuse 2.
const MOUNT_TESTS = ['test/fuse/**/*.test.ts', 'test/mount/**/*.test.ts', 'test/send-mount/**/*.test.ts', 'test/normal-user/**/*.test.ts']

export default defineConfig({
  test: {
    pool: 'forks',
    testTimeout: 120_000,
    hookTimeout: 120_000,
    fileParallelism: true,
    maxWorkers: 2,
    reporters: ['default'],
    projects: [
      { extends: true, test: { name: 'auto', include: ['test/**/*.test.ts'] } },
      { extends: true, test: { name: 'libfuse2', include: MOUNT_TESTS, env: { TRANSFERFS_FUSE_LIBRARY: 'libfuse2' } } },
    ],
  },
})
