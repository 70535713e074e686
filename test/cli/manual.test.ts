// transferfs(1) against --help: the page is rendered by man(1) as a reader sees it, and for
// every command of the real program (found by walking it, so a new command is checked
// without anyone listing it here) its usage, description, arguments, options, subcommands and
// the text after its options (the examples) must be in that command's part of the page.
// Then the settings table, groff's warnings, the reproducible date, and roff escaping.
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Command } from 'commander'
import { beforeAll, describe, expect, it } from 'vitest'
import { commandPath, commandsUnder, manPage, pageDate } from '../../src/cli/manual.js'
import { EXIT } from '../../src/cli/output/exit-codes.js'
import { addExamples, examplesOf } from '../../src/cli/output/examples.js'
import { buildProgram } from '../../src/cli/program.js'
import { bold, escape, example, guardLines, item, request, roff, term, text } from '../../src/cli/roff.js'
import { envName, flagName, parseSettingValue, SETTINGS } from '../../src/config/index.js'

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const TS_REGISTER = path.join(REPO, 'test/fuse/fixtures/register-ts.mjs')

/** `man` as a reader runs it, on the page given on standard input. */
function man(page: string, args: string[], width = 120): { stdout: string; stderr: string; status: number | null } {
  const r = spawnSync('man', [...args, '-l', '-E', 'UTF-8', '-'], {
    input: page,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, MANWIDTH: String(width), MANPAGER: 'cat', PAGER: 'cat' },
  })
  return { stdout: r.stdout, stderr: r.stderr, status: r.status }
}

/**
 * Rendered text without what differs between formatters and not between readers: bold and
 * underline by overstriking, typographic dashes and quotes, and the width of whitespace
 * (the page fills lines at its width, --help at its own).
 */
function plain(rendered: string): string {
  return rendered
    .replace(/.\x08/g, '')
    .replace(/[\u2010\u2011\u2212]/g, '-')
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/[\u201c\u201d]/g, '"')
}
const flat = (s: string): string => plain(s).replace(/\s+/g, ' ').trim()

/** `wanted` is in `text` (both flattened); a failure names what is missing, not the whole page. */
function expectIn(text: string, wanted: string, where: string): void {
  expect(text.includes(flat(wanted)), `${where}: "${flat(wanted)}" is missing`).toBe(true)
}

/** The rendered page cut at its headings: "COMMANDS" (a section), "config set" (a subsection). */
function partsOf(rendered: string): Map<string, string> {
  const parts = new Map<string, string>()
  let heading = '(top)'
  for (const line of plain(rendered).split('\n')) {
    const h = /^(?:([A-Z][A-Z ]+)|   (\S.*))$/.exec(line)
    if (h) {
      heading = (h[1] ?? h[2]) as string
      parts.set(heading, '')
    } else {
      parts.set(heading, `${parts.get(heading) ?? ''}${line}\n`)
    }
  }
  return parts
}

interface HelpItem { term: string; description: string }

/** What `--help` prints for `cmd`: commander's own text and then the text added after it. */
function helpOf(cmd: Command): { all: string; builtIn: string } {
  let all = ''
  // As the CLI prints it to a pipe: 80 columns, no colours.
  cmd.configureOutput({ writeOut: (s) => { all += s }, getOutHelpWidth: () => 80, getOutHasColors: () => false })
  cmd.outputHelp()
  return { all, builtIn: cmd.helpInformation() }
}

/** The items of one of --help's lists ("Options:"), each description unwrapped. */
function helpItems(help: string, heading: string): HelpItem[] {
  const lines = help.split('\n')
  const start = lines.indexOf(heading)
  if (start < 0) return []
  const items: HelpItem[] = []
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === '') break
    const m = /^ {2}(\S.*?)(?: {2,}(.*))?$/.exec(line)
    if (m) items.push({ term: m[1] as string, description: m[2] ?? '' })
    else (items.at(-1) as HelpItem).description += ` ${line.trim()}`
  }
  return items
}

const program = buildProgram()
const commands = commandsUnder(program)
const page = manPage(program, { date: '2026-01-31' })
let parts: Map<string, string>
let whole: string

beforeAll(() => {
  const r = man(page, ['-P', 'cat'])
  expect(r.status, r.stderr).toBe(0)
  parts = partsOf(r.stdout)
  whole = flat(r.stdout)
})

describe('the commands the page is checked for', () => {
  it('are the real program\'s, every command and subcommand', () => {
    // Not vacuous: the walk finds the fourteen commands and config's subcommands.
    expect(program.commands.length).toBeGreaterThanOrEqual(14)
    expect(commands.length).toBeGreaterThanOrEqual(18)
    expect(commands.map(commandPath)).toEqual(expect.arrayContaining(['mount', 'unmount', 'send', 'config', 'config set', 'completion', 'demo']))
  })

  it('each have a part of their own in the rendered page', () => {
    for (const cmd of commands) expect([...parts.keys()], commandPath(cmd)).toContain(commandPath(cmd))
  })

  it('include one added to the program, with nothing else to change', () => {
    const bigger = buildProgram()
    const added = bigger.command('frobnicate').description('Frobnicate a transfer').option('--hard', 'frobnicate harder')
    addExamples(added, ['transferfs frobnicate --hard'])
    const section = flat(partsOf(man(manPage(bigger), ['-P', 'cat']).stdout).get('frobnicate') ?? '')
    for (const wanted of ['transferfs frobnicate [options]', 'Frobnicate a transfer', '--hard frobnicate harder', '$ transferfs frobnicate --hard']) {
      expectIn(section, wanted, 'frobnicate')
    }
  })
})

describe.each(commands.map((cmd) => [commandPath(cmd), cmd] as const))('transferfs %s', (name, cmd) => {
  let section: string
  let help: { all: string; builtIn: string }
  beforeAll(() => {
    section = flat(parts.get(name) ?? '')
    help = helpOf(cmd)
  })

  it('has its usage line and description', () => {
    const usage = /^Usage: (.*)$/m.exec(help.all)?.[1]
    expect(usage).toBeTruthy()
    expectIn(section, usage as string, name)
    expect(cmd.description()).not.toBe('')
    expectIn(section, cmd.description(), name)
  })

  it('has every argument, option and subcommand of --help, with its description', () => {
    const items = ['Arguments:', 'Options:', 'Commands:'].flatMap((heading) => helpItems(help.builtIn, heading))
    // Every command has options at least (--help), so the parse cannot come back empty.
    expect(items.map((i) => i.term)).toContain('-h, --help')
    for (const i of items) {
      expectIn(section, i.term, name)
      expectIn(section, i.description, `${name} ${i.term}`)
    }
  })

  it('has every line --help adds after its options (the examples)', () => {
    expect(help.all.startsWith(help.builtIn)).toBe(true)
    const added = help.all.slice(help.builtIn.length).split('\n').map((l) => l.trim()).filter((l) => l !== '')
    // What is added is the examples, all of them: none reaches --help without reaching the page.
    const shown = added.filter((l) => l.startsWith('$ ')).map(flat)
    expect(shown).toEqual(examplesOf(cmd).map((e) => flat(`$ ${e}`)))
    for (const line of added) expectIn(section, line, name)
  })
})

describe('the page as a whole', () => {
  it('has the program\'s own description, options and command list', () => {
    const help = helpOf(program)
    expectIn(whole, program.description(), 'transferfs')
    const items = ['Options:', 'Commands:'].flatMap((heading) => helpItems(help.builtIn, heading))
    expect(items.length).toBeGreaterThanOrEqual(16)
    for (const i of items) {
      expectIn(whole, i.term, 'transferfs')
      expectIn(whole, i.description, `transferfs ${i.term}`)
    }
    expect(flat(parts.get('NAME') ?? '')).toBe('transferfs - mount a Transfer Service account as a folder, and use the service from the command line')
  })

  it('has the sections a reader looks for', () => {
    for (const h of ['NAME', 'SYNOPSIS', 'DESCRIPTION', 'COMMANDS', 'SETTINGS', 'FILES', 'ENVIRONMENT', 'EXIT STATUS', 'MOUNTING AT LOGIN', 'SEE ALSO']) {
      expect([...parts.keys()]).toContain(h)
    }
    const part = (heading: string): string => flat(parts.get(heading) ?? '')
    expectIn(part('SEE ALSO'), 'fusermount3(1), mount.fuse3(8), systemd-escape(1)', 'SEE ALSO')
    expectIn(part('FILES'), '/usr/lib/systemd/user/transferfs@.service', 'FILES')
    expectIn(part('FILES'), '/sbin/mount.transferfs', 'FILES')
    expectIn(part('MOUNTING AT LOGIN'), 'systemctl --user enable --now transferfs@$(systemd-escape ~/Transfers)', 'MOUNTING AT LOGIN')
    expectIn(part('At boot: /etc/fstab'), 'transferfs  /home/alice/Transfers  transferfs  setuid=alice,_netdev,nofail  0  0', '/etc/fstab')
    expectIn(part('At boot: /etc/fstab'), 'Secrets are refused: api_key=, password= and a proxy= URL with a password', '/etc/fstab')
    expectIn(part('SETTINGS'), 'Secrets (apiKey, password, a proxy URL with a password) do not belong on a command line', 'SETTINGS')
    expectIn(part('SETTINGS'), 'transferfs config set key -', 'SETTINGS')
  })

  it('has every exit code with its meaning', () => {
    const section = parts.get('EXIT STATUS') ?? ''
    const entries = [...section.matchAll(/^ {7}(\d+) +(\S.*)$/gm)]
    const codes = entries.map((m) => Number(m[1]))
    expect(codes).toEqual(Object.values(EXIT).sort((a, b) => a - b))
    expect(codes).toEqual([0, 1, 2, 3, 4, 5, 130])
    for (const m of entries) expect((m[2] as string).length, m[1]).toBeGreaterThan(5)
  })

  it('has every setting with its flag, variable, description and default', () => {
    const section = parts.get('SETTINGS') ?? ''
    expect(flat(section)).toContain('flags, then environment variables, then the config file, then the defaults')
    const entries = new Map<string, string>()
    let key = ''
    for (const line of section.split('\n')) {
      const m = /^ {7}(\S+)$/.exec(line)
      if (m && SETTINGS.some((s) => s.key === m[1])) entries.set((key = m[1] as string), '')
      else if (key) entries.set(key, `${entries.get(key)}${line}\n`)
    }
    expect([...entries.keys()]).toEqual(SETTINGS.map((s) => s.key))
    for (const s of SETTINGS) {
      const entry = flat(entries.get(s.key) ?? '')
      expectIn(entry, flagName(s.key), s.key)
      expectIn(entry, envName(s.key), s.key)
      expectIn(entry, s.description, s.key)
      const shown = /\(default: ([^)]*)\)/.exec(entry)?.[1]
      if (s.default === null) {
        expect(shown, s.key).toBe('not set')
        continue
      }
      // The default as shown, read back as the setting's own value, is the default itself.
      expect(shown, s.key).toBeTruthy()
      const bare = (shown as string).replace(new RegExp(` ${s.unit}$`), '')
      expect(parseSettingValue(s, bare, s.key), s.key).toEqual(s.default)
    }
  })

  it('gives groff and lexgrog nothing to warn about', () => {
    const undated = manPage(program, { date: '' })
    for (const [source, width] of [[page, 120], [page, 80], [undated, 120]] as const) {
      const r = man(source, ['--warnings'], width)
      expect(r.status, r.stderr).toBe(0)
      expect(r.stderr).toBe('')
    }
    const lex = spawnSync('lexgrog', ['-'], { input: page, encoding: 'utf8' })
    expect(lex.status, lex.stderr).toBe(0)
    expect(lex.stdout).toContain('"transferfs - mount a Transfer Service account as a folder')
  })
})

describe('the date in the header', () => {
  it('is the day of SOURCE_DATE_EPOCH, never the clock', () => {
    expect(pageDate({ SOURCE_DATE_EPOCH: '1700000000' })).toBe('2023-11-14')
    expect(pageDate({ SOURCE_DATE_EPOCH: '0' })).toBe('1970-01-01')
    expect(pageDate({})).toBe('')
    expect(pageDate({ SOURCE_DATE_EPOCH: 'yesterday' })).toBe('')
    const th = manPage(program, { date: '2023-11-14' }).split('\n').find((l) => l.startsWith('.TH '))
    expect(th).toBe(`.TH "TRANSFERFS" "1" "2023\\-11\\-14" "transferfs ${program.version()}" "User Commands"`)
  })

  it('makes two builds of one source give the same page', () => {
    expect(manPage(buildProgram(), { date: pageDate({}) })).toBe(manPage(buildProgram(), { date: pageDate({}) }))
  })
})

describe('the entry point and the real --help', () => {
  const node = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, ['--import', TS_REGISTER, ...args], { cwd: REPO, encoding: 'utf8', env: { ...process.env, ...env } })

  it('prints the page, dated by SOURCE_DATE_EPOCH', () => {
    const r = node([path.join(REPO, 'src/cli/manual.ts')], { SOURCE_DATE_EPOCH: '1700000000' })
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toBe(manPage(buildProgram(), { date: '2023-11-14' }))
  })

  it('prints nothing when imported rather than run', () => {
    const r = node(['--input-type=module', '-e', `import ${JSON.stringify(path.join(REPO, 'src/cli/manual.ts'))}`])
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toBe('')
  })

  it('reads the same help as the command line prints', () => {
    for (const args of [['download'], ['config', 'set']]) {
      const r = node([path.join(REPO, 'src/cli/main.ts'), ...args, '--help'])
      expect(r.status, r.stderr).toBe(0)
      const cmd = args.reduce<Command>((c, n) => c.commands.find((s) => s.name() === n) as Command, buildProgram())
      expect(r.stdout).toBe(helpOf(cmd).all)
    }
  })
})

describe('roff escaping', () => {
  it('writes roff\'s special characters as escapes', () => {
    expect(escape('--all')).toBe('\\-\\-all')
    expect(escape('C:\\dir')).toBe('C:\\edir')
    expect(escape('it\'s `x` ~/a^b')).toBe('it\\(aqs \\(gax\\(ga \\(ti/a\\(hab')
    expect(escape('a\tb')).toBe('a b')
    expect(escape('bell\u0007')).toBe('bell')
    expect(escape('é → 😀')).toBe('\\[u00E9] \\[u2192] \\[u1F600]')
    expect(escape('plain text, 50% (ok) "quoted"')).toBe('plain text, 50% (ok) "quoted"')
  })

  it('never lets a line of text start a request', () => {
    expect(guardLines('.TH x\n\'br\nfine\n')).toBe('\\&.TH x\n\\&\'br\nfine\n')
    expect(text('  .hidden file\n\n   next line  ')).toBe('\\&.hidden file\nnext line')
    expect(roff`.${bold('x')} y`).toBe('\\&.\\fBx\\fR y')
    expect(example(['.profile', 'a \\ b'])).toBe('.RS 4\n.nf\n\\&.profile\na \\e b\n.fi\n.RE')
  })

  it('quotes request arguments, a quote inside one included', () => {
    expect(request('SS', 'config set')).toBe('.SS "config set"')
    expect(request('TH', 'say "hi"', '1')).toBe('.TH "say \\(dqhi\\(dq" "1"')
  })

  it('sets what is typed in bold and what is replaced in italics', () => {
    expect(term('--port <n>')).toBe('\\fB\\-\\-port \\fR<\\fIn\\fR>')
    expect(term('transferfs config [options] [command]')).toBe('\\fBtransferfs config \\fR[\\fIoptions\\fR] [\\fIcommand\\fR]')
    expect(item('\\fBx\\fR', 'body\n.br\nmore')).toBe('.TP\n\\fBx\\fR\nbody\n.br\nmore')
  })

  it('comes back out of man exactly as it went in, every printable ASCII character', () => {
    const ascii = Array.from({ length: 94 }, (_, i) => String.fromCharCode(33 + i)).join('')
    const source = ['.TH X 1', '.SH NAME', 'x \\- y', '.SH TEXT', text(`.${ascii}`), example([`'${ascii}`, ` ${ascii}`])].join('\n') + '\n'
    const r = man(source, ['-P', 'cat'], 200)
    expect(r.status, r.stderr).toBe(0)
    const lines = plain(r.stdout).split('\n').map((l) => l.trim())
    expect(lines).toContain(`.${ascii}`)
    expect(lines).toContain(`'${ascii}`)
    expect(lines).toContain(ascii)
    expect(man(source, ['--warnings'], 200).stderr).toBe('')
  })
})
