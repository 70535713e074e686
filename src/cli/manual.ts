// transferfs(1), made from the program itself: each command's usage, description,
// arguments, options and examples are read from the commander objects --help prints, and
// the settings from the SETTINGS table their flags come from, so the page and --help cannot
// disagree. Run as a program it prints the page:
//   node dist/src/cli/manual.js > transferfs.1
import { realpathSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import type { Command, Help, Option } from 'commander'
import { envName, flagName, SETTINGS, type SettingSpec } from '../config/index.js'
import { description, environment, exitStatus, files, mounting, seeAlso } from './manual-text.js'
import { examplesOf } from './output/examples.js'
import { buildProgram } from './program.js'
import { bold, escape, example, italic, item, page, paragraph, request, roff, term, text } from './roff.js'

export interface ManPageOptions {
  /** The date in the page's header (YYYY-MM-DD); by default from SOURCE_DATE_EPOCH, else none. */
  date?: string
}

/**
 * The page's date: the day of SOURCE_DATE_EPOCH (UTC) when it is set, as reproducible builds
 * set it (Debian's from the changelog). Never the clock: two builds of one source must give
 * the same page. Without the variable the header carries only the version.
 */
export function pageDate(env: NodeJS.ProcessEnv = process.env): string {
  const epoch = env.SOURCE_DATE_EPOCH
  if (epoch === undefined || !/^\d+$/.test(epoch.trim())) return ''
  return new Date(Number(epoch.trim()) * 1000).toISOString().slice(0, 10)
}

/** Every command under `cmd`, each before its own subcommands, in the order they were added. */
export function commandsUnder(cmd: Command): Command[] {
  return cmd.commands.flatMap((sub) => [sub, ...commandsUnder(sub)])
}

/** "config set": the command's name after those of its parents, the program's left out. */
export function commandPath(cmd: Command): string {
  const names: string[] = []
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name())
  return names.join(' ')
}

function options(cmd: Command, help: Help): string[] {
  return help.visibleOptions(cmd).map((o) => item(term(help.optionTerm(o)), text(help.optionDescription(o))))
}

/** A labelled list, as --help heads its lists ("Options:"); nothing when the list is empty. */
function labelled(label: string, items: string[]): string[] {
  return items.length ? [paragraph(bold(label)), ...items] : []
}

function commandSection(cmd: Command): string {
  const help = cmd.createHelp()
  const examples = examplesOf(cmd)
  return [
    request('SS', commandPath(cmd)),
    term(help.commandUsage(cmd)),
    paragraph(text(help.commandDescription(cmd))),
    ...labelled('Arguments:', help.visibleArguments(cmd).map((a) => item(term(help.argumentTerm(a)), text(help.argumentDescription(a))))),
    ...labelled('Options:', options(cmd, help)),
    ...labelled('Commands:', help.visibleCommands(cmd).map((c) => item(term(help.subcommandTerm(c)), text(help.subcommandDescription(c))))),
    ...(examples.length ? [paragraph(bold('Examples:')), example(examples.map((e) => `$ ${e}`))] : []),
  ].join('\n')
}

/** The option of `key` as the commands take it (the mount takes every setting), if one does. */
function settingOption(program: Command, s: SettingSpec): Option | undefined {
  for (const cmd of commandsUnder(program)) {
    const found = cmd.options.find((o) => o.long === flagName(s.key))
    if (found) return found
  }
  return undefined
}

function settings(program: Command): string {
  const help = program.createHelp()
  const intro = paragraph(
    roff`Every setting is a flag, a ${bold('TRANSFERFS_*')} environment variable and a key of the config file`,
    roff`(${bold('config.json')} in the config folder). The first that is set wins: flags, then environment variables,`,
    roff`then the config file, then the defaults. ${bold('transferfs config')} shows each value and where it came from;`,
    roff`${bold('transferfs config set')} ${italic('key value')} writes the file. Sizes take ${bold('K')}, ${bold('M')}, ${bold('G')} (powers of 1024),`,
    roff`durations ms or ${bold('s')}, ${bold('m')}, ${bold('h')}; on/off settings take ${bold('yes')} or ${bold('no')} (the flag of one that is off by default`,
    roff`is a switch). A setting that is not set by default uses the account's own default (days, notify, confirmation) or none.`,
  )
  const secrets = paragraph(
    roff`Secrets (${bold('apiKey')}, ${bold('password')}, a ${bold('proxy')} URL with a password) do not belong on a command line: every user`,
    roff`of the computer can read a process's arguments (${page('ps', 1)}, ${bold('/proc/')}${italic('pid')}${bold('/cmdline')}). Give them with`,
    roff`${bold('transferfs config set')} ${italic('key')} ${bold('-')} (which reads the value from standard input into the config file), the ${bold('TRANSFERFS_*')}`,
    roff`variable or the config file. One given as a flag anyway is taken off the process's arguments as soon as transferfs starts, with a`,
    roff`warning (it was readable until then); a background mount hands it to its daemon in the environment, never as an argument.`,
  )
  const entries = SETTINGS.map((s) => {
    const option = settingOption(program, s)
    const flag = option ? help.optionTerm(option) : flagName(s.key)
    // The option's description is the setting's, with its default as --help shows it.
    const said = option ? help.optionDescription(option) : s.description
    const notes = [s.default === null ? '(default: not set)' : '', s.secret ? 'Secret: never shown or logged.' : '', s.redact ? 'Its password is never shown or logged.' : ''].filter(Boolean).join(' ')
    // .br first: a key narrower than the indent would otherwise share its line with the flag.
    return item(bold(s.key), ['.br', `${term(flag)}, ${bold(envName(s.key))}`, '.br', text(notes ? `${said} ${notes}` : said)].join('\n'))
  })
  return [intro, secrets, ...entries].join('\n')
}

export function manPage(program: Command, opts: ManPageOptions = {}): string {
  const help = program.createHelp()
  const about = help.commandDescription(program)
  // NAME is what apropos and whatis index: the one line, without the sentence's capital and period.
  const summary = about.charAt(0).toLowerCase() + about.slice(1).replace(/\.$/, '')
  const subcommands = commandsUnder(program)
  return [
    `.\\" ${program.name()}(1), generated by ${program.name()}'s src/cli/manual.ts from the command definitions; do not edit.`,
    request('TH', program.name().toUpperCase(), '1', opts.date ?? pageDate(), `${program.name()} ${program.version() ?? ''}`.trim(), 'User Commands'),
    // No hyphenation and no stretched spaces: a flag or a path split at a line's end, or
    // padded, could not be copied from the page as it is.
    '.nh',
    '.ad l',
    '.SH NAME',
    `${escape(program.name())} \\- ${escape(summary)}`,
    '.SH SYNOPSIS',
    '.nf',
    [program, ...subcommands].map((c) => term(help.commandUsage(c))).join('\n'),
    '.fi',
    '.SH DESCRIPTION',
    description(about),
    '.SH OPTIONS',
    ...options(program, help),
    '.SH COMMANDS',
    paragraph(roff`The commands, as ${bold('transferfs --help')} lists them. Each is described below as its own ${bold('--help')} describes it.`),
    ...help.visibleCommands(program).map((c) => item(term(help.subcommandTerm(c)), text(help.subcommandDescription(c)))),
    ...subcommands.map(commandSection),
    '.SH SETTINGS',
    settings(program),
    '.SH FILES',
    files(),
    '.SH ENVIRONMENT',
    environment(),
    '.SH "EXIT STATUS"',
    exitStatus(),
    '.SH "MOUNTING AT LOGIN"',
    mounting(),
    '.SH "SEE ALSO"',
    seeAlso(),
  ].join('\n') + '\n'
}

/** Whether this module is the program node was started with (not imported by another). */
function isMain(): boolean {
  const started = process.argv[1]
  if (!started) return false
  try {
    return import.meta.url === pathToFileURL(realpathSync(started)).href
  } catch {
    return false
  }
}

if (isMain()) process.stdout.write(manPage(buildProgram()))
