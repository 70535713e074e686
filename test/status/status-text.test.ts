// `.status` and `transferfs status` show names, notes and the service's errors as text: an
// outbox name or a pin's name with a newline or an escape sequence in it is still one line.
import { describe, expect, it } from 'vitest'
import { renderStatusText, type SendStatusEntry } from '../../src/status/mount-status.js'

const entry = (over: Partial<SendStatusEntry>): SendStatusEntry => ({
  name: 'a.txt', state: 'failed', note: null, bytesSent: 0, bytesTotal: 10, rate: null, eta: null, lastError: null, transferid: null, url: null, ...over,
})

describe('renderStatusText', () => {
  it('keeps each entry on its lines, whatever its name and error hold', () => {
    const text = renderStatusText({
      at: 0,
      entries: [entry({ name: 'report\nfailed   forged.txt\u001b]0;owned\u0007', lastError: 'InvalidEmail: "x\ny"' })],
    })
    expect(text.split('\n')).toEqual([
      'outbox: 0 sending, 0 queued, 0 settling, 1 failed, 0 done',
      'failed   report\\nfailed   forged.txt\\x1b]0;owned\\x07',
      '         error: InvalidEmail: "x\\ny"',
      '',
    ])
  })
})
