// Cold sequential reads through an HTTP proxy against the same reads straight to the
// service, in the same run: the cost of the proxy's hop, held against curl over the same
// two ways. The proxy is Debian's tinyproxy with Basic authentication, as a company's would
// be, on this machine (so its CPU competes with the mount's and the service's for the same
// cores: its own CPU seconds are shown). Not a test: it prints figures.
//
//   node --import ./test/fuse/fixtures/register-ts.mjs scripts/bench/proxy.ts   (from TypeScript)
//   npm run build && node dist/scripts/bench/proxy.js                             (after a build)
//
// Four cold 1 GiB files, read by dd (bs=1M) through a fresh mount each, alternately straight
// and through the proxy (direct, proxied, direct, proxied), so that a drift of the machine
// during the run falls on both; the better of each pair is compared.
import type { Transfer } from '../../src/api/types.js'
import { startProxy } from '../tinyproxy.js'
import { cpuSeconds, fileOnMount, GiB, mbps, perGiB, ratio, sh, withBenchWorld } from './world.js'

const CREDENTIALS = 'bench:bench-pw'

await withBenchWorld('proxy', {}, async (w) => {
  const { rows, service, mountDir } = w
  const proxy = await startProxy({ user: 'bench', password: 'bench-pw' })
  try {
    process.stderr.write('seeding four 1 GiB files...\n')
    const files = await service.seed(4, { fileSize: GiB, subjectPrefix: 'Proxy bench' })
    const url = files[0]!.files[0]!.downloadurl
    /** ms curl takes for the file, straight or through the proxy, best of three. */
    const curl = async (through: boolean) => {
      const times: number[] = []
      for (let i = 0; i < 3; i++) times.push((await sh(w.curl[0]!, [...w.curl.slice(1), ...(through ? ['-x', proxy.url(CREDENTIALS)] : []), url])).ms)
      return Math.min(...times)
    }
    process.stderr.write('curl of 1 GiB, straight and through the proxy...\n')
    const curlDirect = await curl(false)
    const curlProxied = await curl(true)
    rows.push(
      ['curl 1 GiB straight to the service', mbps(GiB, curlDirect)],
      ['curl 1 GiB through the proxy', mbps(GiB, curlProxied)],
      ['  through / straight (curl)', ratio(curlDirect / curlProxied)],
    )

    const runs: Record<'direct' | 'proxied', Array<{ ms: number; cpuS: number; proxyCpuS: number }>> = { direct: [], proxied: [] }
    const order = ['direct', 'proxied', 'direct', 'proxied'] as const
    for (const [i, mode] of order.entries()) {
      process.stderr.write(`cold sequential read of 1 GiB through the mount, ${mode === 'direct' ? 'straight' : 'through the proxy'}...\n`)
      if (mode === 'proxied') w.env.HTTPS_PROXY = proxy.url(CREDENTIALS)
      else delete w.env.HTTPS_PROXY
      const pid = await w.mount()
      const file = await fileOnMount(mountDir, files[i] as Transfer)
      const [cpu0, proxy0] = [await cpuSeconds(pid), await cpuSeconds(proxy.pid)]
      const read = await sh('dd', [`if=${file}`, 'of=/dev/null', 'bs=1M'])
      runs[mode].push({ ms: read.ms, cpuS: (await cpuSeconds(pid)) - cpu0, proxyCpuS: (await cpuSeconds(proxy.pid)) - proxy0 })
      await w.unmount()
    }
    const best = (mode: 'direct' | 'proxied') => runs[mode].reduce((a, b) => (b.ms < a.ms ? b : a))
    const [direct, proxied] = [best('direct'), best('proxied')]
    rows.push(
      ['cold sequential 1 GiB via mount, straight (both runs)', runs.direct.map((r) => mbps(GiB, r.ms)).join(', ')],
      ['cold sequential 1 GiB via mount, through the proxy (both runs)', runs.proxied.map((r) => mbps(GiB, r.ms)).join(', ')],
      ['  through / straight (mount, the better of each)', ratio(direct.ms / proxied.ms)],
      ['  CPU of the mount: straight, through', `${perGiB(direct.cpuS, GiB)}, ${perGiB(proxied.cpuS, GiB)}`],
      ['  CPU of the proxy, through', perGiB(proxied.proxyCpuS, GiB)],
    )
  } finally {
    await proxy.stop()
  }
})
