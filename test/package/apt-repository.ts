// What the package tests need to publish transferfs the way `npm run release` does: a
// release key of their own (made in a temporary GNUPGHOME, never anyone's real key), the
// release command run in the clean build, and a static HTTP server on 127.0.0.1 that serves
// one repository tree at a time, as a web host serves the published folder.
import { execFile } from 'node:child_process'
import { createReadStream } from 'node:fs'
import { mkdir, stat } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'

export interface HostRun {
  code: number
  stdout: string
  stderr: string
}

/** A program on this machine, to completion; never throws on a failing exit. */
export function host(cmd: string, args: string[], opts: { cwd?: string; env?: Record<string, string>; timeoutMs?: number; input?: Buffer } = {}): Promise<HostRun> {
  return new Promise((resolve) => {
    const child = execFile(cmd, args, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, timeout: opts.timeoutMs ?? 60_000, maxBuffer: 256 << 20, encoding: 'utf8' }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout: String(stdout), stderr: String(stderr || (err && typeof err.code !== 'number' ? err.message : '')) }))
    if (opts.input !== undefined) child.stdin?.end(opts.input)
  })
}

export function explain(what: string, r: { code: number; stdout: string; stderr: string }): string {
  return `${what}: exit ${r.code}\nstdout: ${r.stdout.slice(-4000)}\nstderr: ${r.stderr.slice(-4000)}`
}

export interface ReleaseKey {
  /** The GNUPGHOME holding it, and nothing else. */
  home: string
  fingerprint: string
}

/**
 * A release key as the release wants one: Ed25519, its self-signatures made with SHA-512,
 * no passphrase (it lives for one run in a temporary folder).
 */
export async function makeReleaseKey(home: string): Promise<ReleaseKey> {
  await mkdir(home, { recursive: true, mode: 0o700 })
  const env = { GNUPGHOME: home }
  const made = await host('gpg', ['--batch', '--pinentry-mode', 'loopback', '--passphrase', '', '--cert-digest-algo', 'SHA512',
    '--quick-gen-key', 'transferfs test release <release@transferfs.invalid>', 'ed25519', 'sign', '1d'], { env })
  if (made.code !== 0) throw new Error(explain('gpg --quick-gen-key', made))
  const listed = await host('gpg', ['--batch', '--with-colons', '--list-secret-keys'], { env })
  const fingerprint = /^fpr:+([0-9A-F]{40}):/m.exec(listed.stdout)?.[1]
  if (!fingerprint) throw new Error(explain('gpg --list-secret-keys', listed))
  return { home, fingerprint }
}

/** Stops the gpg-agent the key's commands started (one per GNUPGHOME). */
export async function stopAgent(key: ReleaseKey): Promise<void> {
  await host('gpgconf', ['--kill', 'gpg-agent'], { env: { GNUPGHOME: key.home } })
}

export interface RepositoryServer {
  /** The repository's URL, ending in a slash. */
  url: string
  /** From now on, serves the tree at dir. */
  serve(dir: string): void
  close(): Promise<void>
}

/** A static file server on 127.0.0.1 (a free port), as a web host serves the published folder. */
export async function startRepositoryServer(): Promise<RepositoryServer> {
  let root = ''
  const server: Server = createServer((req, res) => {
    const rel = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)
    const file = path.join(root, path.normalize(rel))
    if (!root || !file.startsWith(root + path.sep)) {
      res.writeHead(404).end()
      return
    }
    stat(file).then((s) => {
      if (!s.isFile()) throw new Error('not a file')
      res.writeHead(200, { 'content-length': s.size, 'content-type': 'application/octet-stream' })
      if (req.method === 'HEAD') res.end()
      else createReadStream(file).pipe(res)
    }).catch(() => res.writeHead(404).end())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/`,
    serve: (dir) => {
      root = path.resolve(dir)
    },
    close: () => new Promise((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}

export interface Released {
  /** The .deb in the repository's pool. */
  file: string
  version: string
}

/**
 * `npm run release` in the clean build clone: the version into the repository at out, of the
 * amd64 package only (what the Debian 12 and 13 roots install; test/package/arm64.test.ts
 * releases both architectures).
 */
export async function release(clone: string, key: ReleaseKey, out: string, url: string, version: string, env: Record<string, string>): Promise<Released> {
  const [amd64] = await releaseArchitectures(clone, key, out, url, version, env, ['amd64'])
  return amd64!
}

/**
 * `npm run release` in the clean build clone: the version into the repository at out; with
 * archs null, as the command runs by default (every architecture), else `--arch` them. The
 * .debs it published, one a line, in the order of archs.
 */
export async function releaseArchitectures(clone: string, key: ReleaseKey, out: string, url: string, version: string, env: Record<string, string>, archs: string[] | null): Promise<Released[]> {
  const r = await host(process.execPath, ['packaging/release.mjs', '--out', out, '--repo-url', url, '--version', version, ...(archs ? ['--arch', archs.join(',')] : [])],
    { cwd: clone, env: { ...env, GNUPGHOME: key.home }, timeoutMs: 900_000 })
  if (r.code !== 0) throw new Error(explain(`npm run release (version ${version}) in a clean copy of the checkout`, r))
  const files = r.stdout.trim().split('\n')
  const wanted = (archs ?? ['amd64', 'arm64']).map((arch) => `transferfs_${version}_${arch}.deb`)
  if (files.map((f) => path.basename(f)).join(' ') !== wanted.join(' ')) throw new Error(`release.mjs's lines are not ${wanted.join(', ')}: ${JSON.stringify(files)}`)
  return files.map((file) => ({ file, version }))
}
