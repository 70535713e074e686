import { defineConfig } from 'vitest/config'

// Native code (fuse-native) must load in forked processes, not worker threads.
// FUSE tests mount real file systems: they run one file at a time so two mounts
// never compete for the two cores, and every test has a generous timeout
// because real tools (cp, rsync, tar) run against a real local service.
export default defineConfig({
  test: {
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    fileParallelism: true,
    maxWorkers: 2,
    reporters: ['default'],
  },
})
