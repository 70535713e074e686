// `transferfs unmount DIR`: unmounts through the front of this platform (fronts/front.ts); the
// mount's process notices and ends cleanly: sends pause, pins stay for the next mount.
import type { Command } from 'commander'
import { chooseFront } from './fronts/front.js'

export async function unmount(dir: string): Promise<void> {
  await (await chooseFront()).unmount(dir)
}

export function register(program: Command): void {
  program
    .command('unmount')
    .alias('umount')
    .description('Unmount a transferfs mount (the mount process then ends)')
    .argument('<dir>', 'the mounted folder')
    .action(async (dir: string) => {
      await unmount(dir)
    })
}
