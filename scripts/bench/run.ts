// `npm run bench` (after a build): every benchmark of scripts/bench, one after the other.
// Today that is the mount's (mount.ts, which documents its own command).
await import('./mount.js')
