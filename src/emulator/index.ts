// The local Transfer Service: two HTTPS listeners (API and file server) over one in-memory store.
import { randomBytes } from 'node:crypto'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ServiceAnnouncement } from '../api/types.js'
import { apiHandler } from './api.js'
import { createSelfSignedCertificate } from './cert.js'
import { ServiceClock } from './clock.js'
import type { ServiceContext } from './context.js'
import { seedDemo } from './demo.js'
import { Faults } from './faults.js'
import { FileHashPool } from '../base/file-hash-pool.js'
import { fileServerHandler } from './fileserver.js'
import { MailLog } from './maillog.js'
import { SETTINGS } from './settings.js'
import { Store } from './store.js'
import { prepareThumbnail } from './thumbnails.js'

export interface ServiceOptions {
  /** API port; 0 (default) picks a free one. */
  port?: number
  /** File-server port; 0 (default) picks a free one. */
  filePort?: number
  /** Where file bytes and the certificate go; default a temporary folder removed by close(). */
  dataDir?: string
  /** The API key clients must send; default a random one. */
  apiKey?: string
  /** Serve the /_emulator test controls. Default false. */
  controls?: boolean
  /** Seed the main account's inbox with the demo transfers. Default false. */
  demo?: boolean
  /** The main account; default SETTINGS.mainUserEmail with a random password. */
  user?: { email?: string; password?: string }
  /** Log lines (no secrets in them); default: discarded. */
  log?: (line: string) => void
}

export interface RunningService extends ServiceAnnouncement {
  controls: boolean
  close(): Promise<void>
  /**
   * An outage: both listeners stop and every connection is dropped, so clients get
   * "connection refused"; the store is kept. resume() listens again on the same ports.
   */
  pause(): Promise<void>
  resume(): Promise<void>
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject)
      resolve((server.address() as AddressInfo).port)
    })
  })
}

function stop(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve())
    server.closeAllConnections()
  })
}

export async function startService(options: ServiceOptions = {}): Promise<RunningService> {
  const ownsDir = options.dataDir === undefined
  const dataDir = options.dataDir ?? await mkdtemp(join(tmpdir(), 'transferfs-service-'))
  try {
    return await start(options, dataDir, ownsDir)
  } catch (err) {
    if (ownsDir) await rm(dataDir, { recursive: true, force: true })
    throw err
  }
}

async function start(options: ServiceOptions, dataDir: string, ownsDir: boolean): Promise<RunningService> {
  await mkdir(dataDir, { recursive: true })
  const clock = new ServiceClock()
  const cert = await createSelfSignedCertificate(new Date(), SETTINGS.certificateTtlMs)
  const ca = join(dataDir, 'ca.pem')
  await writeFile(ca, cert.certPem)
  const store = new Store(dataDir, clock)
  store.onFileStored = prepareThumbnail
  // The store lives in memory: bytes a previous run left in a given data dir can never be reached again.
  if (!ownsDir) await store.removeAll()
  const user = {
    email: options.user?.email ?? SETTINGS.mainUserEmail,
    password: options.user?.password ?? randomBytes(9).toString('base64url'),
  }
  const mainUser = store.createUser({
    ...user, name: 'You', companyid: SETTINGS.mainCompanyId, canstorefilesforever: true,
    contactgroups: [{ ...SETTINGS.mainContactGroup, emails: [...SETTINGS.mainContactGroup.emails] }],
  })
  const ctx: ServiceContext = {
    store, clock, faults: new Faults(), mail: new MailLog(),
    apiKey: options.apiKey ?? `local-${randomBytes(12).toString('hex')}`,
    apiOrigin: '', fileOrigin: '', secret: randomBytes(32), controls: options.controls ?? false,
    log: options.log ?? (() => {}),
    // Started with the service, as a running service has them: a worker started by the
    // first GetRangeHash added tens of milliseconds to that request alone.
    hashes: new FileHashPool(SETTINGS.hashWorkers).warm(),
  }
  const tls = { cert: cert.certPem, key: cert.keyPem, requestTimeout: 0 }
  const handleApi = apiHandler(ctx)
  const handleFiles = fileServerHandler(ctx)
  const crash = (err: unknown) => ctx.log(`unhandled: ${err instanceof Error ? err.stack ?? err.message : String(err)}`)
  const api = createServer(tls, (req, res) => { handleApi(req, res).catch(crash) })
  const files = createServer(tls, (req, res) => { handleFiles(req, res).catch(crash) })
  // Clients that go away mid-body are normal here (aborts, injected resets).
  for (const server of [api, files]) server.on('clientError', (_err, socket) => socket.destroy())
  files.on('secureConnection', (socket) => {
    ctx.faults.counters.fileConnections++
    ctx.faults.counters.openFileConnections++
    socket.once('close', () => { ctx.faults.counters.openFileConnections-- })
  })
  const stopListening = () => Promise.all([stop(api), stop(files)])
  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    await stopListening()
    await ctx.hashes.close()
    if (ownsDir) await rm(dataDir, { recursive: true, force: true })
  }
  try {
    const apiPort = await listen(api, options.port ?? 0)
    const filePort = await listen(files, options.filePort ?? 0)
    ctx.apiOrigin = `https://127.0.0.1:${apiPort}`
    ctx.fileOrigin = `https://127.0.0.1:${filePort}`
    if (options.demo) {
      const count = await seedDemo(ctx, mainUser)
      ctx.log(`demo: ${count} transfers in ${user.email}'s inbox`)
    }
  } catch (err) {
    // startService removes the folder it made.
    closed = true
    await stopListening()
    await ctx.hashes.close()
    throw err
  }
  const ports = [Number(new URL(ctx.apiOrigin).port), Number(new URL(ctx.fileOrigin).port)] as const
  let paused = false
  return {
    baseUrl: `${ctx.apiOrigin}/api`,
    uploadUrl: ctx.fileOrigin,
    ca,
    apiKey: ctx.apiKey,
    user,
    controls: ctx.controls,
    close,
    async pause() {
      if (closed || paused) return
      paused = true
      await stopListening()
    },
    async resume() {
      if (closed || !paused) return
      paused = false
      await listen(api, ports[0])
      await listen(files, ports[1])
    },
  }
}
