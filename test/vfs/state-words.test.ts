// The words of user.transferfs.state for sends and for folders that sum up their children:
// pure, from what the status already has of each send.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { stagedState, type StagingTree } from '../../src/vfs/areas/staging.js'
import { sendStateText, sendSummaryText, shortReason, stateText, type SendProgress } from '../../src/vfs/state-words.js'

const send = (name: string, state: SendProgress['state'], bytesSent = 0, bytesTotal = 100, lastError: string | null = null): SendProgress =>
  ({ name, state, bytesSent, bytesTotal, lastError })

describe('one send\'s state', () => {
  it('says waiting, sending N%, sent or failed with a short reason', () => {
    expect(sendStateText(send('a', 'settling'))).toBe('waiting')
    expect(sendStateText(send('a', 'queued'))).toBe('waiting')
    expect(sendStateText(send('a', 'waiting'))).toBe('waiting')
    expect(sendStateText(send('a', 'sending', 40, 100))).toBe('sending 40%')
    expect(sendStateText(send('a', 'sending', 0, 0))).toBe('sending 0%')
    expect(sendStateText(send('a', 'done', 100, 100))).toBe('sent')
    expect(sendStateText(send('a', 'failed', 0, 100, 'InvalidRecipient: the address is not valid'))).toBe('failed: the address is not valid')
  })

  it('cuts a long reason to a few words', () => {
    expect(shortReason('TransferTooLarge: the transfer is larger than what the account may send at once')).toBe('the transfer is larger than what…')
    expect(shortReason('HTTP 400')).toBe('HTTP 400')
    expect(shortReason(null)).toBe('refused by the service')
    expect(shortReason('x'.repeat(200)).length).toBeLessThanOrEqual(60)
  })
})

describe('a folder summing up its children', () => {
  it('names the one state they share', () => {
    expect(sendSummaryText([])).toBe('empty')
    expect(sendSummaryText([send('a', 'queued'), send('b', 'settling')])).toBe('waiting')
    expect(sendSummaryText([send('a', 'done')], 3)).toBe('sent')
    expect(sendSummaryText([send('a', 'sending', 25, 100)])).toBe('sending 25%')
  })

  it('counts each kind otherwise, the percentage over the bytes of the sends under way', () => {
    expect(sendSummaryText([send('a', 'done'), send('b', 'done'), send('c', 'sending', 40, 100), send('d', 'failed', 0, 100, 'X: no')]))
      .toBe('2 of 4 sent, 1 sending 40%, 1 failed')
    expect(sendSummaryText([send('a', 'sending', 10, 100), send('b', 'sending', 90, 100), send('c', 'queued')])).toBe('2 sending 50%, 1 waiting')
    expect(sendSummaryText([send('c', 'queued')], 2)).toBe('2 of 3 sent, 1 waiting')
  })

  it('always counts every child once', () => {
    const states = ['settling', 'queued', 'waiting', 'sending', 'done', 'failed'] as const
    fc.assert(fc.property(fc.array(fc.constantFrom(...states), { minLength: 2, maxLength: 20 }), fc.nat(5), (kinds, already) => {
      const text = sendSummaryText(kinds.map((k, i) => send(`e${i}`, k, 10, 100, 'E: why')), already)
      const total = kinds.length + already
      const counted = [...text.matchAll(/(\d+) (?:of \d+ sent|sending|waiting|failed)/g)].reduce((n, m) => n + Number(m[1]), 0)
      if (/^(sent|waiting|failed: .*|sending \d+%)$/.test(text)) return
      expect(counted).toBe(total)
    }))
  })

  it('says how many files a pin covers in a folder not pinned as a whole', () => {
    expect(stateText(false, 0, 500, null, { pinnedFiles: 3, files: 5 })).toBe('3 of 5 files pinned')
    expect(stateText(false, 0, 500, null, { pinnedFiles: 0, files: 5 })).toBe('online')
    expect(stateText(true, 500, 500, null, { pinnedFiles: 5, files: 5 })).toBe('pinned')
  })
})

describe('the state of a staged path', () => {
  const tree = (sends: SendProgress[]): StagingTree => ({ sends: () => sends }) as unknown as StagingTree
  const t = tree([
    send('id1', 'settling'), send('id1/added.txt', 'sending', 30, 100),
    send('a@b.com/report.pdf', 'failed', 0, 10, 'TooLarge: the file is too large'), send('a@b.com/photos', 'queued'),
    send('old.txt', 'done', 5, 5),
  ])

  it('is the innermost send holding it: an entry, a file inside a folder entry', () => {
    expect(stagedState(t, '/id1/added.txt', false)).toBe('sending 30%')
    expect(stagedState(t, '/a@b.com/photos/x/y.jpg', false)).toBe('waiting')
    expect(stagedState(t, '/a@b.com/report.pdf', false)).toBe('failed: the file is too large')
  })

  it('sums up the sends below a folder; finished ones have left', () => {
    expect(stagedState(t, '/a@b.com', true)).toBe('1 waiting, 1 failed')
    expect(stagedState(t, '/', true)).toBe('1 sending 30%, 2 waiting, 1 failed')
    expect(stagedState(tree([]), '/', true)).toBe('empty')
    expect(stagedState(t, '/old.txt', false)).toBe('waiting')
  })
})
