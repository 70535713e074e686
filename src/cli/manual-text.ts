// The sections of transferfs(1) that no command definition holds: what the mount looks
// like, its files and variables, the exit codes and how to mount at login or at boot.
// Names that the code defines (files, variables, exit codes) are taken from it.
import { DIRECT, PROXY_VARIABLES } from '../api/proxy.js'
import { CERT_VARIABLES, DISTRIBUTION_BUNDLES } from '../api/trust.js'
import { CONFIG_FILE_NAME, envName, FOLDER_FLAGS, SETTINGS, TOKEN_FILE_NAME } from '../config/index.js'
import { SENT_FILE } from '../send/open-outbox.js'
import { STATUS_JSON_FILE } from '../status/status-file.js'
import { CHUNK_CACHE_DIR, MOUNT_LOG_FILE } from './compose.js'
import { EXIT } from './output/exit-codes.js'
import { bold, escape, example, italic, item, page, paragraph, roff, text } from './roff.js'

/** What each exit code means; typed by EXIT's names, so a new code cannot go undocumented. */
const EXIT_MEANINGS: Record<keyof typeof EXIT, string> = {
  ok: 'Success.',
  error: 'Any other failure: the service refused the request, a file failed verification, a local file is in the way.',
  usage: 'Usage error: an unknown flag, a missing argument, an invalid setting value, a config file that is not valid JSON.',
  auth: 'Not signed in, or not allowed: never signed in, the session ended (unused for 3 months), a wrong API key, a protected transfer without its password or with a wrong one.',
  notFound: 'Not found: no transfer or file with that id or trackid, or it expired or was deleted.',
  unreachable: 'The service could not be reached (after the retries), or said it is temporarily unavailable.',
  interrupted: 'Interrupted by Ctrl-C (128 + SIGINT). A download keeps what it verified: the same command resumes it.',
}

/** The mount's folders, as `ls` would show them, each with what it holds. */
const TREE = [
  '~/Transfers/',
  '  inbox/                                   received transfers, newest first (read-only)',
  '    2026-11-20 Quarterly report (a1b2c3)/  "<sent date> <subject> (<transfer id>)"',
  '      report.pdf',
  '      data/raw.csv                         a file name holding a path becomes folders',
  '      .transfer.json                       the transfer\'s details (never its key)',
  '  sent/                                    transfers sent from this machine',
  '  outbox/                                  drop files here to send them',
  '  by-id/                                   ls by-id/<id or trackid> opens any transfer you can see',
  '  search/                                  the searches made since mounting, newest first',
  '    invoice acme/                          ls "search/invoice acme": the inbox transfers it finds',
  '  .status                                  what is being sent, how far, what failed and why',
]

export function description(programDescription: string): string {
  return [
    paragraph(text(programDescription)),
    paragraph(
      roff`${bold('transferfs')} mounts the account as a folder with FUSE. The inbox and each transfer become folders,`,
      roff`files are read on demand in verified chunks with a memory and a disk cache, and files copied into`,
      roff`${bold('outbox/')} are sent as transfers. Sign in once with ${bold('transferfs login')};`,
      roff`${bold('transferfs mount')} ${italic('dir')} mounts the account (in the background, or in the foreground with ${bold('-f')})`,
      roff`and ${bold('transferfs unmount')} ${italic('dir')} unmounts it. A mount looks like this:`,
    ),
    '.PP',
    example(TREE),
    paragraph(
      roff`A file or folder copied into ${bold('outbox/')} is sent as one transfer once it has been left alone for`,
      roff`${bold('settleMs')}; ${bold('.status')} and ${bold('transferfs status')} show how far it is, and the transfer then appears under ${bold('sent/')}.`,
    ),
    paragraph(
      roff`What the service offers that a folder does not show well has a command (download tracking, verified`,
      roff`and resumable downloads, sending without a mount, searching the inbox). Only the commands that mount (${bold('mount')}, ${bold('demo')}) need a FUSE library.`,
    ),
  ].join('\n')
}

export function files(): string {
  const [config, cache, data] = FOLDER_FLAGS
  const folder = (path: string, flag: (typeof FOLDER_FLAGS)[number], holds: string): string =>
    item(bold(path), `${holds} ${roff`Elsewhere when ${bold(flag.env)} or ${bold(flag.flag)} says so.`}`)
  return [
    folder('~/.config/transferfs/', config, roff`The config folder (${bold('$XDG_CONFIG_HOME/transferfs')}): ${bold(CONFIG_FILE_NAME)}, the settings ${bold('transferfs config set')} writes, and ${bold(TOKEN_FILE_NAME)}, the session.`),
    folder('~/.cache/transferfs/', cache, roff`The cache folder (${bold('$XDG_CACHE_HOME/transferfs')}): ${bold(CHUNK_CACHE_DIR + '/')}, the chunk cache (at most ${bold('diskCacheBytes')}), safe to delete while unmounted.`),
    folder('~/.local/share/transferfs/', data, roff`The data folder (${bold('$XDG_DATA_HOME/transferfs')}): outbox staging, the send journal, ${bold(SENT_FILE)}, ${bold(STATUS_JSON_FILE)} and ${bold(MOUNT_LOG_FILE)} (the background mount's log). It must survive restarts.`),
    paragraph(roff`The three folders are created 0700 and the files in them 0600, whatever the umask.`),
    item(bold('/usr/lib/systemd/user/transferfs@.service'), roff`The systemd user unit that mounts the folder its instance names (MOUNTING AT LOGIN).`),
    item(bold('/sbin/mount.transferfs'), roff`The helper ${page('mount', 8)} runs for file systems of type ${bold('transferfs')}, such as those of ${bold('/etc/fstab')}.`),
    item(bold('/etc/fuse.conf'), roff`Its line ${bold('user_allow_other')} lets a user other than root mount with ${bold('allowOther')}.`),
  ].join('\n')
}

export function environment(): string {
  const settingVariables = SETTINGS.map((s) => envName(s.key))
  return [
    item(
      bold('TRANSFERFS_') + italic('SETTING'),
      roff`One variable per setting (SETTINGS), stronger than the config file and weaker than the flags: `
        + settingVariables.map((v) => bold(v)).join(', ') + '.',
    ),
    ...FOLDER_FLAGS.map((f) => item(bold(f.env), roff`The ${escape(f.description)}, as ${bold(f.flag)} gives it (the flag wins).`)),
    item(
      `${bold('XDG_CONFIG_HOME')}, ${bold('XDG_CACHE_HOME')}, ${bold('XDG_DATA_HOME')}`,
      roff`Where the config, cache and data folders are when the variables above are not set (FILES).`,
    ),
    item(
      names(PROXY_VARIABLES.https),
      roff`The HTTP proxy of https:// addresses (every address of the service), read as ${page('curl', 1)} reads it:`
        + roff` ${italic('http://user:password@host:port')} (Basic credentials; a ${bold('@')} or ${bold(':')} in them is written ${bold('%40')}, ${bold('%3A')}),`
        + roff` ${italic('https://')} for a proxy spoken to over TLS, port 1080 when none is given. Every connection, file bytes`
        + roff` included, goes through it as a CONNECT tunnel. The ${bold('proxy')} setting, when set, is used instead (${bold(DIRECT)}: no proxy).`,
    ),
    item(names(PROXY_VARIABLES.http), roff`The same for http:// addresses.`),
    item(
      names(PROXY_VARIABLES.noProxy),
      roff`Hosts reached without the proxy, separated by commas: a name covers the hosts below it (${bold('example.com')} and ${bold('.example.com')}`
        + roff` both cover ${bold('files.example.com')}), an address or a range such as ${bold('10.0.0.0/8')} covers those addresses, ${bold('host:port')}`
        + roff` that port only, and ${bold('*')} alone every host. It applies to the ${bold('proxy')} setting too.`,
    ),
    item(
      `${bold(CERT_VARIABLES.file)}, ${bold(CERT_VARIABLES.dir)}`,
      roff`Where the system's certificate store is, as OpenSSL reads them: a PEM bundle, and folders of certificates named by their`
        + roff` hash (${page('openssl-rehash', 1)}). When neither is set, the distribution's bundle: ${DISTRIBUTION_BUNDLES.slice(0, 2).map((b) => bold(b)).join(' or ')}.`
        + roff` The authorities trusted are Node's own, the store's and those of the ${bold('ca')} setting, together.`
        + roff` A file or folder they name that cannot be read is left out with one warning naming it; a ${bold('ca')} file that cannot be read is an error.`,
    ),
    item(bold('NO_COLOR'), roff`When set and not empty, no colours.`),
    item(bold('FORCE_COLOR'), roff`When set, not empty and not 0, colours even where the output is not a terminal.`),
    item(bold('TERM'), roff`When ${bold('dumb')}, no colours.`),
  ].join('\n')
}

/** A variable's spellings, as the list names them: "https_proxy, HTTPS_PROXY". */
function names(variables: readonly string[]): string {
  return variables.map((v) => bold(v)).join(', ')
}

export function exitStatus(): string {
  const codes = (Object.entries(EXIT) as [keyof typeof EXIT, number][]).sort((a, b) => a[1] - b[1])
  return codes.map(([name, code]) => item(bold(String(code)), escape(EXIT_MEANINGS[name]))).join('\n')
}

export function mounting(): string {
  const instance = 'transferfs@$(systemd-escape ~/Transfers)'
  return [
    paragraph(
      roff`The systemd user unit ${bold('transferfs@.service')} mounts the folder its instance names (the folder's path`,
      roff`escaped by ${page('systemd-escape', 1)}) while you are logged in, and always with ${bold('loginctl enable-linger')}.`,
      roff`It mounts with your session and settings: sign in first.`,
    ),
    example([
      'transferfs login --email you@example.com',
      `systemctl --user enable --now ${instance}`,
      `journalctl --user -u ${instance}`,
      `systemctl --user disable --now ${instance}`,
    ]),
    '.SS "At boot: /etc/fstab"',
    paragraph(
      roff`${page('mount', 8)} runs ${bold('/sbin/mount.transferfs')} ${italic('source dir')} [${bold('-sfnv')}] [${bold('-o')} ${italic('options')}]`,
      roff`for the file systems of type ${bold('transferfs')}. A line of ${bold('/etc/fstab')}:`,
    ),
    example(['transferfs  /home/alice/Transfers  transferfs  setuid=alice,_netdev,nofail  0  0']),
    paragraph(roff`Its options:`),
    item(bold('setuid=') + italic('name'), roff`Run the mount as ${italic('name')}, as ${page('mount.fuse3', 8)} does: needed when root mounts it at boot. The session and settings are that user's (run ${bold('transferfs login')} as them once).`),
    item(bold('allow_other'), roff`${bold('--allow-other')} (needs ${bold('user_allow_other')} in ${bold('/etc/fuse.conf')} unless root mounts it).`),
    item(bold('bin=') + italic('path'), roff`The transferfs program (default: the one on PATH).`),
    item(italic('key') + bold('=') + italic('value'), roff`Any setting by its flag name, with ${bold('_')} or ${bold('-')} (${bold('chunk_size=16M')}, ${bold('log_level=debug')}): passed on as ${bold('--')}${italic('key value')}.`
      + roff` Secrets are refused: ${bold('api_key=')}, ${bold('password=')} and a ${bold('proxy=')} URL with a password, since ${bold('/etc/fstab')} and command lines are readable by every user.`
      + roff` They go in the config file of the user the mount runs as (${bold('transferfs config set api-key -')} run as that user) or in its environment (${bold('TRANSFERFS_API_KEY')}).`),
    item(bold('defaults, auto, noauto, user, users, nofail, _netdev, rw, ro, x-*, comment=*'), roff`The options of ${page('mount', 8)} itself, left to it.`),
    paragraph(roff`The helper run with ${bold('-f')} prints the command it would run instead of running it.`),
  ].join('\n')
}

export function seeAlso(): string {
  return [page('fusermount3', 1), page('mount.fuse3', 8), page('systemd-escape', 1), page('systemctl', 1), page('fstab', 5), page('mount', 8)].join(',\n')
}
