// Per-handle detection of sequential reading and the fetch sizes it earns. Pure state,
// no I/O. Small first, big later (thumbnailers and type sniffers read only a file's first
// bytes; a whole chunk for them is waste): a run starts with a head-sized fetch and each
// further fetch of the run is twice the last, up to a whole chunk (rclone's chunk
// doubling); having read R bytes in sequence, the run has earned 2R ahead (up to
// prefetchBytes), which the handle fetches as far as the link is quick enough to make worth it
// (link-rate.ts). A jump away starts a new run, so random reads stay small and a peek at a
// file's first bytes costs one head fetch.
//
// What counts as a jump: the kernel's readahead has up to max_background requests of up to
// 1 MiB in flight at once (16 MiB with the mount's settings), and libfuse's threads hand
// them on in any order, so a read of a run may arrive well behind its furthest read (12 MiB
// at a 4 MiB readahead) or ahead of it by as much. Taken for jumps, such reads cancelled the
// run's prefetch, and the reads that followed fetched those bytes again: a cold `cat` at a
// 4 MiB readahead fetched 1.2× the file and the service hashed 1.7×. So a read within the
// run's lookahead of its furthest read, behind or ahead (the bytes the run keeps fetched
// ahead are more than the kernel has in flight), is the run's own; a run without a lookahead
// yet has the slack. A reader going back further than that has left the run.

export interface AccessPolicy {
  /** Bytes of a fetch for a read outside any run (and the smallest fetch). */
  headSize: number
  /** Bytes of the largest fetch. */
  chunkSize: number
  /** Bytes kept fetched or in flight ahead of a sequential reader, at most. */
  prefetchBytes: number
  /** Bytes around the end of the run still counted as sequential (kernel readahead reorders). */
  sequentialSlack: number
}

export class AccessPattern {
  /** End of the furthest read of the current run; -1 before the first read. */
  private highWater = -1
  /** Bytes read in the current run (the first read of a run included). */
  private runBytes = 0
  /** Bytes of the next fetch of the run. */
  private window: number

  constructor(private readonly policy: AccessPolicy) {
    this.window = policy.headSize
  }

  /** Records a read; true when it continues the current run, false when it starts a new one. */
  observe(position: number, length: number): boolean {
    const reach = Math.max(this.policy.sequentialSlack, this.lookahead)
    const sequential = this.highWater >= 0 && position >= this.highWater - reach && position <= this.highWater + reach
    if (sequential) {
      this.highWater = Math.max(this.highWater, position + length)
      this.runBytes += length
    } else {
      this.highWater = position + length
      this.runBytes = length
      this.window = this.policy.headSize
    }
    return sequential
  }

  /** End of the furthest read of the run: prefetch measures from here. */
  get position(): number {
    return Math.max(0, this.highWater)
  }

  /** Bytes the next fetch of this run may cover. */
  get fetchSize(): number {
    return this.window
  }

  /** The run started a fetch of `fetchSize`: the next one may be twice as large. */
  fetched(): void {
    this.window = Math.min(this.policy.chunkSize, this.window * 2)
  }

  /**
   * The run has read more than one head: it is a reader going through the file, worth
   * whole blocks and a prefetch. Until then its reads are as good as random.
   */
  get established(): boolean {
    return this.runBytes > this.policy.headSize
  }

  /**
   * Bytes the run has earned to keep fetched or in flight past `position`. Zero until the run
   * has read more than one head: a single peek at a file prefetches nothing. On a slow link
   * the handle fetches less far (link-rate.ts); a read within this reach is still the run's
   * own, since the kernel's readahead arrives out of order by as much whatever the link.
   */
  get lookahead(): number {
    if (!this.established) return 0
    return Math.min(this.policy.prefetchBytes, 2 * this.runBytes)
  }
}
