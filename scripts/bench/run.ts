// `npm run bench` (after a build): every benchmark of scripts/bench, one after the other.
// Each writes bench-results/<step>.json (results.ts), which tables.ts renders into
// docs/performance.md. Each documents its own command and gives its figures as ratios against a baseline of
// the same run (curl of the same bytes, the service's own latency, the null filesystem of
// null-fs.ts, the client's direct upload): read.ts (sequential reads, `transferfs download`,
// parallel readers, a slow link), random.ts (fio, first bytes), reread.ts (our caches after
// a remount), listing.ts (find over a large inbox, ls -l of a wide folder), names.ts (a folder of
// 10,000 look-alike names / as many distinct ones), send.ts, proxy.ts
// (cold reads through an HTTP proxy / straight to the service), readers.ts (cat, head, md5sum
// and cp of a cold file on a root mount and a normal user's, on both FUSE libraries, against
// an O_DIRECT reader of the same bytes), pin.ts (a cold read beside a pin fetching / alone, a
// pin's rate / curl's, the requests for pinning the newest transfers of a large inbox), nfs.ts
// (the NFS server that macOS mounts: nfs-cat and nfs-ls against cat and ls on the FUSE mount),
// file-manager.ts (Nautilus opening a 5,000-transfer inbox with the transferfs extension / without).
await import('./read.js')
await import('./random.js')
await import('./reread.js')
await import('./listing.js')
await import('./names.js')
await import('./send.js')
await import('./proxy.js')
await import('./readers.js')
await import('./pin.js')
await import('./nfs.js')
await import('./file-manager.js')
