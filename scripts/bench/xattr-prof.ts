// scratch (not committed): the mount's CPU for the extension's getxattr of a 5,000-transfer inbox.
import path from 'node:path'
import { cpuSeconds, sh, withBenchWorld } from './world.js'

await withBenchWorld('xattr-prof', {}, async (w) => {
  await w.service.control('POST', '/inbox/seed', { to: w.service.user.email, count: 5000 })
  const pid = await w.mount()
  const inbox = path.join(w.mountDir, 'inbox')
  await sh('ls', [inbox])
  await new Promise((r) => setTimeout(r, 8000))
  const py = `
import os, sys, time
d = sys.argv[1]; attrs = [a for a in sys.argv[2].split(',') if a]
names = os.listdir(d)
t = time.monotonic()
n = 0
for name in names:
    p = os.path.join(d, name)
    os.lstat(p)
    for a in attrs:
        try: os.getxattr(p, a, follow_symlinks=False)
        except OSError: pass
        n += 1
print(n, round((time.monotonic() - t) * 1000))
`
  const attrs = process.env.ATTRS ?? 'user.transferfs.state,user.transferfs.pin,user.xdg.origin.url'
  for (let i = 0; i < Number(process.env.PASSES ?? 8); i++) {
    if (process.env.REFRESH) {
      await new Promise((r) => setTimeout(r, 31000))
      await sh('ls', [inbox])
      await new Promise((r) => setTimeout(r, 8000))
    }
    const c0 = await cpuSeconds(pid)
    const out = (await sh('python3', ['-c', py, inbox, attrs])).stdout.trim()
    process.stderr.write(`${attrs}: ${out}, mount ${(await cpuSeconds(pid) - c0).toFixed(2)} CPU-s\n`)
  }
})
