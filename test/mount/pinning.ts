// What the pin mount tests share: a transfer of random files made on the service, and
// what a pin looks like from outside the mount (the state attribute, the status, a file's MD5).
import { createHash, randomFillSync } from 'node:crypto'
import type { PinStatusEntry } from '../../src/pin/status.js'
import { run, waitFor } from '../support/mount.js'
import type { TestService } from '../support/service.js'
import { cli, serviceClient } from './harness.js'

export interface Made {
  id: string
  subject: string
  /** Unix ms, as the service gives them. */
  sentdate: number
  expiredate: number
  files: Array<{ name: string; size: number; md5: string }>
}

/** A transfer to the main user, of random files of these sizes; `days` until it expires. */
export async function made(service: TestService, subject: string, files: Array<{ name: string; size: number }>, days?: number): Promise<Made> {
  const client = await serviceClient(service)
  try {
    const init = await client.transfers.initialize({ subject, to: [service.user.email], ...(days !== undefined ? { days } : {}) })
    const out: Made['files'] = []
    for (const f of files) {
      const data = randomFillSync(Buffer.allocUnsafe(f.size))
      await client.upload.uploadFile({
        transferUrl: init.transferurl, transferId: init.transferid, transferKey: init.transferkey, fileName: f.name,
        source: { size: data.length, read: async (s, e) => data.subarray(s, e) },
      })
      out.push({ name: f.name, size: f.size, md5: createHash('md5').update(data).digest('hex') })
    }
    const t = await client.transfers.complete(init.transferid, init.transferkey)
    return { id: t.id, subject, sentdate: t.sentdate, expiredate: t.expiredate, files: out }
  } finally {
    await client.close()
  }
}

export const total = (m: Made): number => m.files.reduce((n, f) => n + f.size, 0)

/** `user.transferfs.state` of a path on the mount. */
export async function state(p: string): Promise<string> {
  const r = await run('getfattr', ['--only-values', '-n', 'user.transferfs.state', p])
  if (r.code !== 0) throw new Error(`getfattr ${p}: ${r.stderr}`)
  return r.stdout
}

/** `user.transferfs.shown` of `p`: what a file manager shows of it, in one read. */
export async function shown(p: string): Promise<string> {
  const r = await run('getfattr', ['--only-values', '-n', 'user.transferfs.shown', p])
  if (r.code !== 0) throw new Error(`getfattr ${p}: ${r.stderr}`)
  return r.stdout
}

export async function md5sum(p: string): Promise<string> {
  const r = await run('md5sum', [p], { timeoutMs: 120_000 })
  if (r.code !== 0) throw new Error(`md5sum ${p}: ${r.stderr}`)
  return r.stdout.split(' ')[0]!
}

/**
 * The pins status lists once `ready` holds for them: status.json is rewritten within a second
 * of a change, so a pin the state attribute already calls complete may still show as fetching.
 */
export async function pinEntriesWhen(ready: (entries: PinStatusEntry[]) => boolean, timeoutMs = 10_000): Promise<PinStatusEntry[]> {
  let entries = await pinEntries()
  await waitFor(async () => ready((entries = await pinEntries())), timeoutMs, 250)
  return entries
}

/** The pins `transferfs status --json` lists. */
export async function pinEntries(): Promise<PinStatusEntry[]> {
  const r = await cli(['status', '--json'])
  if (r.code !== 0) throw new Error(`transferfs status --json: ${r.stderr}`)
  return (JSON.parse(r.stdout) as { pins?: { entries: PinStatusEntry[] } }).pins?.entries ?? []
}
