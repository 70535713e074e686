#!/usr/bin/env node
// Applies our fixes to fuse-native 2.2.6 and rebuilds its addon, so the mount
// gets the real mtime in utimens (cp -a, rsync -a, mv keep times), a /dev/fuse handle
// that child processes do not inherit, a working userId option, and extended attributes
// outside user.* answered without a trip into JS. Idempotent: a marker records the patched
// source's hash, and the rebuild is skipped while the built addon matches it.
import { createHash } from 'node:crypto'
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { createRequire } from 'node:module'
import path from 'node:path'

const require = createRequire(import.meta.url)
const dir = path.dirname(require.resolve('fuse-native/package.json'))
const version = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).version
if (version !== '2.2.6') {
  console.error(`patch-fuse-native: expected fuse-native 2.2.6, found ${version}; the patch targets 2.2.6 only`)
  process.exit(1)
}

const fixes = [
  // utimens passed atime in both argument slots: JS never saw mtime.
  { file: 'fuse-native.c', from: 'FUSE_UINT64_TO_INTS_ARGV(l->atime, 5)', to: 'FUSE_UINT64_TO_INTS_ARGV(l->mtime, 5)' },
  // The /dev/fuse handle was inherited by every child the mounting process starts: a child still
  // doing I/O on the mount when the daemon died kept the mount alive and hung in D state.
  { file: 'fuse-native.c', from: '  if (ch == NULL) {\n    napi_throw_error(env, "fuse failed", "fuse failed");',
    to: '  if (ch != NULL) fcntl(fuse_chan_fd(ch), F_SETFD, FD_CLOEXEC);\n  if (ch == NULL) {\n    napi_throw_error(env, "fuse failed", "fuse failed");' },
  { file: 'fuse-native.c', from: '#include <unistd.h>\n', to: '#include <unistd.h>\n#include <fcntl.h>\n#include <errno.h>\n' },
  // Only user.* extended attributes exist on the mount, yet `ls -l` asks security.selinux of
  // every entry and the kernel caches no answer: each was a round trip into JS (~170 us,
  // most of a warm `ls -l`). Other namespaces are answered right here, as the core would:
  // "not supported", which `ls` remembers for the whole filesystem, so it stops asking
  // (an answer of "no such attribute" had it ask again for every entry).
  { file: 'fuse-native.c', from: '  if (implemented[op_getxattr]) ops.getxattr = fuse_native_getxattr;',
    to: '  if (implemented[op_getxattr]) ops.getxattr = fuse_native_getxattr_user;' },
  { file: 'fuse-native.c', from: '#endif\n\nFUSE_METHOD(listxattr',
    to: '#endif\n\n#ifdef __APPLE__\n#define fuse_native_getxattr_user fuse_native_getxattr\n#else\n' +
      'static int fuse_native_getxattr_user (const char *path, const char *name, char *value, size_t size) {\n' +
      '  if (strncmp(name, "user.", 5) != 0) return -EOPNOTSUPP;\n' +
      '  return fuse_native_getxattr(path, name, value, size);\n}\n#endif\n\nFUSE_METHOD(listxattr' },
  // userId pushed 'user_id=' and the value as two items: "-ouser_id=,1000".
  { file: 'index.js', from: "options.push('user_id=', this.opts.userId)", to: "options.push('user_id=' + this.opts.userId)" },
]
// Every fix is applied to the package's own text, kept beside it as <file>.orig the first
// time: a fix changed here then replaces its older version instead of landing on top of it.
for (const file of new Set(fixes.map((f) => f.file))) {
  const p = path.join(dir, file)
  const orig = `${p}.orig`
  if (!existsSync(orig)) copyFileSync(p, orig)
  let src = readFileSync(orig, 'utf8')
  for (const fix of fixes.filter((f) => f.file === file)) {
    if (!src.includes(fix.from)) {
      console.error(`patch-fuse-native: ${file} lacks the text a fix replaces (patched by an older version of this script?): reinstall it with \`rm -rf node_modules/fuse-native && npm ci\``)
      process.exit(1)
    }
    src = src.replace(fix.from, fix.to)
  }
  if (readFileSync(p, 'utf8') !== src) writeFileSync(p, src)
}

const sourceHash = createHash('sha256').update(readFileSync(path.join(dir, 'fuse-native.c'))).digest('hex')
const marker = path.join(dir, 'build', 'Release', '.transferfs-patched')
const addon = path.join(dir, 'build', 'Release', 'fuse.node')
if (existsSync(addon) && existsSync(marker) && readFileSync(marker, 'utf8') === sourceHash) process.exit(0)

const npmDir = path.dirname(path.dirname(process.execPath))
const candidates = [
  path.join(npmDir, 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
  path.join(npmDir, 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
]
const gyp = candidates.find((c) => existsSync(c))
if (!gyp) {
  console.error('patch-fuse-native: node-gyp not found next to npm; install it with `npm i -g node-gyp`')
  process.exit(1)
}
const args = [gyp, 'rebuild']
// Build against the installed Node headers when they are there: no download needed.
if (existsSync('/usr/include/node/node_api.h')) args.push('--nodedir=/usr')
execFileSync(process.execPath, args, { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] })
writeFileSync(marker, sourceHash)
console.error('patch-fuse-native: fuse-native rebuilt with our fixes')
