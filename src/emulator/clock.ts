// The service's clock: real time plus an offset that the test controls move forward.
export class ServiceClock {
  private offsetMs = 0

  now(): number {
    return Date.now() + this.offsetMs
  }

  advance(ms: number): void {
    this.offsetMs += ms
  }
}
