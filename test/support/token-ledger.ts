/** How a grant shares its resource: alone (a write lock, a lease of 1, a leader's term) or with others. */
export type GrantSharing = 'exclusive' | 'shared';

interface Entry {
  readonly label: string;
  readonly sharing: GrantSharing;
  readonly token: bigint;
  /** How many grants were recorded when this one's acquire was called. */
  readonly calledAfter: number;
}

/**
 * The grants of one resource, in the order they reached the test, checked against the rule
 * of docs/fencing.md ("A token never goes down"):
 * - every grant's token is greater than that of every grant handed out before its acquire
 *   was called (its create comes after their granting reads);
 * - an exclusive grant's token is greater than that of every grant before it;
 * - shared grants waiting at once may be let in by one change and share a token.
 *
 * Usage: `const called = ledger.call()` before the acquire, `ledger.grant(...)` once it resolved.
 */
export class TokenLedger {
  private readonly entries: Entry[] = [];

  /** Marks an acquire as called now: the grants recorded so far came before it. */
  call(): number {
    return this.entries.length;
  }

  /** Records a grant, and fails (naming the grants involved) where it breaks the rule. */
  grant(label: string, sharing: GrantSharing, token: bigint, calledAfter = this.entries.length): bigint {
    const bound = sharing === 'exclusive' ? this.entries.length : calledAfter;
    const lower = this.entries.slice(0, bound).filter((earlier) => earlier.token >= token);
    if (lower.length > 0) {
      const names = lower.map((earlier) => `${earlier.label} (${earlier.token})`).join(', ');
      throw new Error(`${label} (${sharing}) got token ${token}, not above earlier grants: ${names}`);
    }
    this.entries.push({ label, sharing, token, calledAfter });
    return token;
  }

  /** The tokens in the order recorded. */
  get tokens(): bigint[] {
    return this.entries.map((entry) => entry.token);
  }

  /** The highest token recorded, or -1n before any. */
  get highest(): bigint {
    return this.entries.reduce((max, entry) => (entry.token > max ? entry.token : max), -1n);
  }
}
