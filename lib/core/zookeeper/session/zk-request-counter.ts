/**
 * ZooKeeper requests sent, by operation, plus the watch notifications received
 * (`notification`): shows where every round trip goes.
 */
export class ZkRequestCounter {
  private readonly counts = new Map<string, number>();

  count(op: string): void {
    this.counts.set(op, (this.counts.get(op) ?? 0) + 1);
  }

  /** A copy of the counts so far, e.g. `{ create: 3, getChildren: 4, remove: 3 }`. */
  snapshot(): Record<string, number> {
    return Object.fromEntries(this.counts);
  }

  total(): number {
    let sum = 0;
    for (const n of this.counts.values()) sum += n;
    return sum;
  }
}
