// A vitest reporter for .ci/run: one line per file and per test as each starts and ends,
// appended to the file TRANSFERFS_TEST_PROGRESS names, as it happens (never buffered), so
// that a run stopped from outside still tells which files and tests were running, and a
// finished one how long each file took. Lines: `<event>\t<project>\t<file>[\t<ms or test>]`.
import { appendFileSync } from 'node:fs'
import type { Reporter, TestCase, TestModule } from 'vitest/node'

export default class ProgressReporter implements Reporter {
  private readonly file = process.env.TRANSFERFS_TEST_PROGRESS ?? ''

  private line(fields: Array<string | number>): void {
    if (this.file) appendFileSync(this.file, `${fields.join('\t')}\n`)
  }

  onTestModuleStart(m: TestModule): void {
    this.line(['file-start', m.project.name, m.relativeModuleId])
  }

  onTestModuleEnd(m: TestModule): void {
    this.line(['file-end', m.project.name, m.relativeModuleId, Math.round(m.diagnostic().duration), m.state()])
  }

  onTestCaseReady(t: TestCase): void {
    this.line(['test-start', t.project.name, t.module.relativeModuleId, t.fullName])
  }

  onTestCaseResult(t: TestCase): void {
    this.line(['test-end', t.project.name, t.module.relativeModuleId, t.fullName])
  }
}
