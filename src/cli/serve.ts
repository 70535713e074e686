// `transferfs serve`: runs the local Transfer Service until SIGINT/SIGTERM.
// The first stdout line is the JSON announcement (ServiceAnnouncement); logs go to stderr.
import type { Command } from 'commander'
import { InvalidArgumentError } from 'commander'
import { startService } from '../emulator/index.js'

function port(value: string): number {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('a port is an integer from 0 to 65535')
  return n
}

interface ServeOptions {
  demo?: boolean
  controls?: boolean
  port: number
  filePort: number
  dataDir?: string
  apiKey?: string
}

export function register(program: Command): void {
  program
    .command('serve')
    .description('Run the local Transfer Service (HTTPS, self-signed certificate) for trying transferfs out and for tests')
    .option('--demo', 'put the demo transfers in the account\'s inbox')
    .option('--controls', 'serve the /_emulator test controls')
    .option('--port <n>', 'API port (0 = any free port)', port, 0)
    .option('--file-port <n>', 'file-server port (0 = any free port)', port, 0)
    .option('--data-dir <dir>', 'where file bytes and the certificate go (default: a temporary folder removed at exit)')
    .option('--api-key <key>', 'the API key clients must send (default: a random one)')
    .action(async (opts: ServeOptions) => {
      const log = (line: string) => process.stderr.write(`transferfs serve: ${line}\n`)
      const service = await startService({
        demo: opts.demo ?? false,
        controls: opts.controls ?? false,
        port: opts.port,
        filePort: opts.filePort,
        dataDir: opts.dataDir,
        apiKey: opts.apiKey,
        log,
      })
      const { close, ...announcement } = service
      process.stdout.write(`${JSON.stringify(announcement)}\n`)
      log(`API at ${service.baseUrl}, files at ${service.uploadUrl}; stop with Ctrl-C`)
      let stopping = false
      const stop = (signal: string) => {
        if (stopping) return
        stopping = true
        log(`${signal}: stopping`)
        close().then(() => process.exit(0), (err: unknown) => {
          log(`stopping failed: ${err instanceof Error ? err.message : String(err)}`)
          process.exit(1)
        })
      }
      process.on('SIGINT', () => stop('SIGINT'))
      process.on('SIGTERM', () => stop('SIGTERM'))
    })
}
