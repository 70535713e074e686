// Settings of the read path, each with its default and unit in one place. src/cli maps
// them from src/config (readOptionsOf); everything here is plain bytes, counts and milliseconds.
const KiB = 1024
const MiB = 1024 * KiB
const GiB = 1024 * MiB

export interface ReadOptions {
  /**
   * Bytes: the largest single Range request, and the grid requests align to (50 MiB,
   * the size the service recommends). A sequential reader grows toward whole chunks.
   */
  chunkSize: number
  /**
   * Bytes: the unit one GetRangeHash call verifies. A read waits only for the pieces it
   * needs, so this bounds how long a read waits on a slow link: 5 MiB is ~4 s at
   * 10 Mbit/s (far below FUSE's 15 s op timeout), 10 hash calls per 50 MiB chunk, and
   * large enough that a hash round trip per piece does not limit a fast link.
   */
  pieceSize: number
  /**
   * Bytes: the unit cached in memory and on disk (a record in a segment file of 16
   * neighbouring blocks on disk). Divides pieceSize. 1 MiB like mountpoint-s3's disk
   * cache blocks: small enough that a head read costs one block.
   */
  blockSize: number
  /**
   * Bytes: the head of a file, and what the first fetch of a run there fetches, rounded
   * up to whole blocks (a run elsewhere starts with its reads' own spans). A small first
   * read in the head (a type sniffer's or thumbnailer's peek) fetches only its own span
   * (handle.ts); a reader going on through the head gets whole blocks from here.
   */
  headSize: number
  /**
   * Bytes a random read's own verified range is aligned to. A read that jumps into a
   * part of a file nothing holds fetches just its span (a 4 KiB read: 4 KiB, not the
   * 1 MiB block), with its range hash asked at the same time; the caches keep blocks only.
   */
  randomReadAlign: number
  /**
   * Bytes: a read at least this long that starts at a block boundary, or follows right
   * after the handle's last read, and stops inside its last block fetches its whole blocks
   * (cached, shared with the reads that follow) even where it would be random. libfuse 2 passes at most 128 KiB per
   * request: the kernel cuts a 1 MiB read into eight that come one after another, and as
   * eight random spans each paid a range request and a hash round trip of its own. A read
   * this large is one of such a train, or a reader of large records; smaller random reads
   * keep their own spans.
   */
  blockReadMin: number
  /**
   * Bytes kept fetched or in flight ahead of the readers reading sequentially, shared among
   * them (bounded prefetch); at most half the memory left for blocks.
   */
  prefetchBytes: number
  /**
   * Milliseconds of what the link delivers kept fetched ahead of a sequential reader, beyond
   * one piece (link-rate.ts): enough for the next fetch's request and its hash calls to make
   * their round trips before the stream the reader waits on ends, so the link stays busy.
   * More only fetches further ahead, taking the link's share from the bytes the reader waits
   * for, and leaves more unread when it stops.
   */
  prefetchHorizonMs: number
  /**
   * Bytes of tolerance around the end of the previous read that still count as
   * sequential. The kernel's readahead sends requests up to its whole window (the mount
   * sets 4 MiB on libfuse 3; src/cli/compose.ts raises this for a larger one) ahead of the
   * reader, many at once and out of order; a tolerance below that window took them for
   * jumps, cancelled the prefetch and fetched its bytes again (a cold `cat` fetched 1.48×
   * the file in 15× the requests). Twice the window. Reads
   * within the run's lookahead of its furthest read belong to the run whatever the slack
   * (access-pattern.ts): the slack bounds a run whose lookahead is smaller.
   */
  sequentialSlack: number
  /** Range fetches in flight across the whole mount (the service asks for at most 4). */
  maxConcurrentFetches: number
  /** GetRangeHash calls in flight across the whole mount. */
  maxConcurrentHashes: number
  /**
   * Milliseconds a read may wait: transient faults (5xx, 429, resets, stalls, damaged
   * bytes or hashes) are retried until then, and a fetch nobody has waited on for that
   * long without progress stops. The mount sets it from its read deadline.
   */
  deadlineMs: number
  /** Milliseconds of the first backoff between tries; doubles each try (with jitter). */
  retryBaseDelayMs: number
  /** Milliseconds: the longest backoff between two tries (a reader is waiting). */
  retryMaxDelayMs: number
  /** Milliseconds a fetch may receive nothing before it counts as stalled and is retried. */
  stallTimeoutMs: number
  /** Milliseconds one GetRangeHash call may take. */
  hashTimeoutMs: number
  /**
   * Bytes all read buffers may take: cached blocks, pieces being fetched and hashed, blocks
   * waiting for the disk cache.
   */
  memoryCacheBytes: number
  /** Bytes of verified blocks kept on disk (least recently used out first); 0 disables the disk cache. */
  diskCacheBytes: number
  /** Folder of the disk cache (the user cache folder); no disk cache when null. */
  diskCacheDir: string | null
}

export const DEFAULT_READ_OPTIONS: ReadOptions = {
  chunkSize: 50 * MiB,
  pieceSize: 5 * MiB,
  blockSize: 1 * MiB,
  headSize: 1 * MiB,
  randomReadAlign: 4 * KiB,
  blockReadMin: 128 * KiB,
  prefetchBytes: 100 * MiB,
  prefetchHorizonMs: 250,
  sequentialSlack: 8 * MiB,
  maxConcurrentFetches: 4,
  maxConcurrentHashes: 8,
  deadlineMs: 60_000,
  retryBaseDelayMs: 100,
  retryMaxDelayMs: 2_000,
  stallTimeoutMs: 10_000,
  hashTimeoutMs: 15_000,
  memoryCacheBytes: 512 * MiB,
  diskCacheBytes: 10 * GiB,
  diskCacheDir: null,
}

/** Defaults overlaid with what the caller set; throws on sizes that do not nest. */
export function resolveReadOptions(partial: Partial<ReadOptions> = {}): ReadOptions {
  const o: ReadOptions = { ...DEFAULT_READ_OPTIONS, ...partial }
  const positive = ['chunkSize', 'pieceSize', 'blockSize', 'headSize', 'randomReadAlign', 'blockReadMin', 'maxConcurrentFetches', 'maxConcurrentHashes', 'deadlineMs'] as const
  for (const k of positive) {
    if (!Number.isInteger(o[k]) || o[k] <= 0) throw new RangeError(`read option ${k} must be a positive integer`)
  }
  if (o.pieceSize % o.blockSize !== 0) throw new RangeError('pieceSize must be a multiple of blockSize')
  // Pieces need not divide chunks: a piece cut by a chunk boundary is verified in two parts.
  if (o.chunkSize % o.blockSize !== 0) throw new RangeError('chunkSize must be a multiple of blockSize')
  return o
}
