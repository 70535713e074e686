// Sizes as a person reads them, the same in every command, status text and message: binary
// units, one decimal at most and none for a whole number ("512 B", "1.5 KiB", "10 GiB").
// It imports nothing of ours, so the read path, the send path and the commands share it.

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB']

/** "1.2 GiB", "10 GiB", "512 B"; "-" for a size not known (missing, negative or not a number). */
export function formatBytes(n: number | null | undefined): string {
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) return '-'
  let v = n
  let i = 0
  while (v >= 1024 && i < UNITS.length - 1) {
    v /= 1024
    i++
  }
  return i === 0 ? `${n} B` : `${Number(v.toFixed(1))} ${UNITS[i]}`
}
