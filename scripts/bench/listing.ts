// Listings through the mount against the local service: `find` over an inbox of 5,000
// transfers costs the inbox pages only (each page carries its transfers' files), next to
// the same `find` run again once everything is known (the FUSE + kernel floor of that tree).
//
//   node --import ./test/fuse/fixtures/register-ts.mjs scripts/bench/listing.ts   (from TypeScript)
//   npm run build && node dist/scripts/bench/listing.js                             (after a build)
import path from 'node:path'
import { Agent, request } from 'undici'
import { sh, withBenchWorld } from './world.js'

const TRANSFERS = 5000
/** Inbox page size the local service uses. */
const PAGE = 1000

await withBenchWorld('listing', { service: {} }, async ({ mountDir, service, caPem, rows }, mount) => {
  const agent = new Agent({ connect: { ca: caPem } })
  const control = async (method: 'GET' | 'POST', p: string, body?: unknown): Promise<unknown> => {
    const res = await request(`${new URL(service.baseUrl).origin}/_emulator${p}`, {
      method, dispatcher: agent, body: body === undefined ? undefined : JSON.stringify(body),
      headers: { 'x-api-key': service.apiKey, 'content-type': 'application/json' },
    })
    return res.body.json()
  }
  try {
    await control('POST', '/inbox/seed', { to: service.user.email, count: TRANSFERS })
    await mount()
    await control('POST', '/counters/reset')
    const inbox = path.join(mountDir, 'inbox')
    const cold = await sh('bash', ['-c', 'find "$1" -type f | wc -l', 'bash', inbox])
    const calls = ((await control('GET', '/counters')) as { routes: Record<string, number> }).routes
    const warm = await sh('bash', ['-c', 'find "$1" -type f | wc -l', 'bash', inbox])
    const requests = Object.values(calls).reduce((a, b) => a + b, 0)
    rows.push(
      [`find inbox/ -type f, ${TRANSFERS} transfers, cold`, `${cold.ms.toFixed(0)} ms, ${cold.stdout.trim()} files`],
      ['  requests made / inbox pages', `${requests} / ${Math.ceil(TRANSFERS / PAGE)} (${JSON.stringify(calls)})`],
      ['  the same find again (all known)', `${warm.ms.toFixed(0)} ms`],
      ['  cold / all known (time ratio)', (cold.ms / warm.ms).toFixed(2)],
    )
  } finally {
    await agent.close()
  }
})
