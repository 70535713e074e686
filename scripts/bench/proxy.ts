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
import { cpuSeconds, fileOnMount, GiB, mbps, perGiB, sh, withBenchWorld } from './world.js'

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
    const curlHow = 'curl of a 1 GiB file, best of 3'
    rows.push(
      { figure: 'curl straight to the service', value: mbps(GiB, curlDirect), unit: 'MB/s', how: curlHow },
      { figure: 'curl through the proxy', value: mbps(GiB, curlProxied), unit: 'MB/s', baseline: 'curl straight to the service', ratio: curlDirect / curlProxied, how: `${curlHow}, curl -x` },
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
    const how = 'dd bs=1M of a cold 1 GiB file on a fresh mount, straight and through the proxy alternately, the better of two'
    rows.push(
      { figure: 'cold read via mount, straight', value: mbps(GiB, direct.ms), unit: 'MB/s', how },
      { figure: 'cold read via mount, through the proxy', value: mbps(GiB, proxied.ms), unit: 'MB/s', baseline: 'cold read via mount, straight', ratio: direct.ms / proxied.ms, how: `${how} (HTTPS_PROXY)` },
      { figure: 'mount CPU, straight', value: perGiB(direct.cpuS, GiB), unit: 'CPU-s/GiB', how: 'the mount\'s user + system CPU during the read' },
      { figure: 'mount CPU, through the proxy', value: perGiB(proxied.cpuS, GiB), unit: 'CPU-s/GiB', baseline: 'mount CPU, straight', ratio: proxied.cpuS / direct.cpuS, how: 'the same' },
      { figure: 'proxy CPU', value: perGiB(proxied.proxyCpuS, GiB), unit: 'CPU-s/GiB', how: 'tinyproxy\'s CPU during the proxied read' },
    )
  } finally {
    await proxy.stop()
  }
})
