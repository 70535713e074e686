// The X display number a test's `xvfb-run -a` starts looking from. `-a` takes the first number
// without a lock file, and two runs starting together (tests side by side, other checkouts'
// tests on the same machine) can both see the same one free: a start drawn at random makes
// that unlikely, and `-a` still steps past a number that is taken.
export function serverNumber(): number {
  return 100 + Math.floor(Math.random() * 800)
}
