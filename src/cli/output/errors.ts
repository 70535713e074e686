// How a command fails: one line saying what went wrong (the layers below already word
// it for a person), a hint saying what to do when there is one, and the exit code of
// exit-codes.ts. Commander's own usage errors exit with EXIT.usage too.
import type { Command } from 'commander'
import { ERROR_CODE, errorCodeOf, ProxyError } from '../../api/errors.js'
import { isUntrustedCertificate } from '../../api/failure.js'
import { plainText } from '../../base/shown-text.js'
import { CliError, EXIT, exitCodeOf, isAbort } from './exit-codes.js'
import { styleFor } from './style.js'

/** What to do about a kind of failure, when the message does not say it already. */
export function hintFor(err: unknown): string | null {
  if (err instanceof CliError) return err.hint
  const code = exitCodeOf(err)
  const message = err instanceof Error ? err.message : ''
  if (isUntrustedCertificate(err)) {
    return 'on Debian and Ubuntu, copy the authority\'s certificate (PEM, named *.crt) into /usr/local/share/ca-certificates/ and run `sudo update-ca-certificates`; or give it with --ca FILE or TRANSFERFS_CA=FILE (`transferfs config set ca FILE` keeps it)'
  }
  const proxy = proxyErrorOf(err)
  if (proxy) {
    if (proxy.status === 407 || proxy.status === 401) return 'give the proxy\'s user name and password in its URL: --proxy http://user:password@host:port, TRANSFERFS_PROXY or HTTPS_PROXY (a password with @ or : in it is written %40, %3A)'
    if (proxy.status !== null && proxy.status < 500) return 'the proxy does not allow this connection: ask its administrator, or list the service\'s host in NO_PROXY if it can be reached without the proxy'
    return 'check the proxy\'s address (--proxy, TRANSFERFS_PROXY, HTTPS_PROXY; `transferfs config`) and that it is running, or list the service\'s host in NO_PROXY if it can be reached without it'
  }
  if (code === EXIT.unreachable) {
    const kind = errorCodeOf(err)
    return kind === ERROR_CODE.network || kind === ERROR_CODE.offline
      ? 'check that the service is running and reachable at the configured URL (--api-url, TRANSFERFS_API_URL, `transferfs config`), then try again'
      : 'the service is busy or down for a moment; try again later'
  }
  if (code === EXIT.auth && errorCodeOf(err) !== ERROR_CODE.notSignedIn && !/transferfs login|password/i.test(message)) {
    return 'sign in again with `transferfs login --email <address>`, or check the API key (`transferfs config`)'
  }
  if (code === EXIT.notFound) return 'check the id; `transferfs inbox` lists the transfers you received'
  return null
}

/** The proxy's failure behind `err` (itself, or what made the client offline), if any. */
function proxyErrorOf(err: unknown): ProxyError | null {
  for (let e = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) if (e instanceof ProxyError) return e
  return null
}

/** The message of an error, without the stack. */
export function messageOf(err: unknown): string {
  if (isAbort(err)) return 'interrupted'
  if (err instanceof Error) return err.message || err.name
  return String(err)
}

/** What went wrong as one line: a message quotes names and the service's words, shown as plain text. */
export function reportError(err: unknown, stream: NodeJS.WriteStream = process.stderr): void {
  const style = styleFor(stream)
  stream.write(`${style.red('transferfs:')} ${plainText(messageOf(err))}\n`)
  const hint = hintFor(err)
  if (hint) stream.write(`${style.dim('hint:')} ${hint}\n`)
}

/**
 * Wraps a command's action: an error is reported and becomes the exit code. The process
 * then ends by itself (stdout of a pipe is flushed first), so actions close what they open.
 */
export function action<A extends unknown[]>(fn: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await fn(...args)
    } catch (err) {
      reportError(err)
      process.exitCode = exitCodeOf(err)
    }
  }
}

/** Usage errors of `cmd` (unknown flag, missing argument) exit with EXIT.usage; help exits 0. */
export function usageExits(cmd: Command): Command {
  return cmd.exitOverride((err) => {
    process.exit(err.exitCode === 0 ? EXIT.ok : EXIT.usage)
  })
}
