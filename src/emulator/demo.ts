// `serve --demo`: the demo transfers of demo-content.ts, received by the main account.
// Seeded straight into the store; every file is streamed to disk (the 1 GiB one too, unhashed:
// its digests are known).
import type { ServiceContext } from './context.js'
import { demoTransfers } from './demo-content.js'
import { DAY } from './settings.js'
import type { User } from './store.js'

const DEMO_DAYS = 30

export async function seedDemo(ctx: ServiceContext, receiver: User): Promise<number> {
  const now = ctx.clock.now()
  let count = 0
  for (const demo of demoTransfers()) {
    const sentdate = now - demo.sentAgoMs
    // An expired demo transfer ended an hour ago; the others have their full lifetime from when they were sent.
    const expiredate = demo.expired ? now - 60 * 60 * 1000 : Math.max(sentdate + DEMO_DAYS * DAY, now + DAY)
    const transfer = await ctx.store.createTransfer({
      to: [receiver.email], senderId: ctx.store.userByEmail(demo.from)?.id ?? null, from: demo.from,
      subject: demo.subject, message: demo.message, password: demo.password ?? null, confirmation: false,
      notify: false, days: Math.max(1, Math.round((expiredate - sentdate) / DAY)), permanent: false, sentdate, expiredate,
      status: 'STATUS_COMPLETE', transfersize: null, source: 'demo', companyid: null, fileRequestId: null,
      fileRequestShareId: null, incomingpageid: null, customfields: [], portalId: null, allowforwarding: false,
    })
    for (const file of demo.files) {
      const stored = await ctx.store.writeFile(transfer, file.name, file.open(), sentdate, file.digests)
      if (stored.size !== file.size) ctx.log(`demo: ${file.name} has ${stored.size} bytes, expected ${file.size}`)
    }
    count += 1
  }
  return count
}
