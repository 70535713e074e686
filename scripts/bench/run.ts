// `npm run bench` (after a build): every benchmark of scripts/bench, one after the other.
// Each documents its own command and prints its figures as ratios against a baseline of
// the same run: mount.ts (reading through the mount), listing.ts (find over a large inbox),
// send.ts (cp into outbox/).
await import('./mount.js')
await import('./listing.js')
await import('./send.js')
