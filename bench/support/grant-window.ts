import type { Counts } from '../workers/impl.protocol.js';
import { addCounts, countsDelta } from './request-counts.js';

/**
 * Grants seen by a lease scenario's contenders, and the window of them it measures: it
 * opens at grant number `warmupGrants` and closes after `grants` more (or when `close()`
 * is called), taking every session's counts at both ends, so what it reports per grant is
 * a steady state's, not the start's burst of queueing. Also tracks the most leases held
 * at once (a holder counts until right before its release call: no grant can come sooner).
 */
export class GrantWindow {
  stopped = false;
  private granted = 0;
  private holding = 0;
  private maxHolding = 0;
  private start: { at: bigint; grants: number; counts: Counts[] } | undefined;
  private end: { at: bigint; grants: number; counts: Counts[] } | undefined;
  private onOpen: (() => void) | undefined;
  /** Resolves when the window opens. */
  readonly opened = new Promise<void>((resolve) => (this.onOpen = resolve));

  constructor(
    private readonly snapshot: () => Counts[],
    private readonly warmupGrants: number,
    private readonly grants: number | undefined,
  ) {
    if (warmupGrants === 0) this.open();
  }

  onGrant(): void {
    this.maxHolding = Math.max(this.maxHolding, ++this.holding);
    this.granted++;
    if (this.granted === this.warmupGrants) this.open();
    else if (this.grants !== undefined && this.granted === this.warmupGrants + this.grants) this.close();
  }

  onRelease(): void {
    this.holding--;
  }

  /** Closes the window now (duration reached, or a contender failed); the contenders stop after their cycle. */
  close(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.end = { at: process.hrtime.bigint(), grants: this.granted, counts: this.snapshot() };
  }

  result(): { grants: number; elapsedNs: number; counts: Counts; maxHolding: number } {
    const { start, end } = this;
    if (!start || !end)
      throw new Error(`the grant window never opened (${this.granted} grants, ${this.warmupGrants} to warm up)`);
    const counts: Counts = {};
    start.counts.forEach((before, i) => addCounts(counts, countsDelta(before, end.counts[i])));
    return {
      grants: end.grants - start.grants,
      elapsedNs: Number(end.at - start.at),
      counts,
      maxHolding: this.maxHolding,
    };
  }

  private open(): void {
    this.start = { at: process.hrtime.bigint(), grants: this.granted, counts: this.snapshot() };
    this.onOpen?.();
  }
}
