/** One request sent and not answered yet. */
export interface InflightRequest {
  readonly op: string;
  readonly path: string;
  /** When it was sent (performance.now()). */
  readonly sentAt: number;
  /** A write: the leader must commit it. */
  readonly write: boolean;
}

type Fail = (error: Error) => void;

/**
 * The requests a session is waiting on, each with the way to fail it: node-zookeeper-client
 * never calls back a request whose reply was lost in a black hole, nor one queued into a
 * session that died, so the session fails them itself.
 */
export class InflightRequests {
  private readonly requests = new Map<Fail, InflightRequest>();

  add(request: InflightRequest, fail: Fail): void {
    this.requests.set(fail, request);
  }

  /** Forgets the request; false if it was failed already. */
  settle(fail: Fail): boolean {
    return this.requests.delete(fail);
  }

  /** The send time of the oldest request (only writes: `writesOnly`), if any. */
  oldest(writesOnly: boolean): number | undefined {
    let oldest: number | undefined;
    for (const { sentAt, write } of this.requests.values()) {
      if ((write || !writesOnly) && (oldest === undefined || sentAt < oldest)) oldest = sentAt;
    }
    return oldest;
  }

  /** Fails every request sent before `sentBefore` with the error `errorFor` makes for it. */
  failSentBefore(sentBefore: number, errorFor: (request: InflightRequest) => Error): void {
    for (const [fail, request] of [...this.requests]) if (request.sentAt < sentBefore) fail(errorFor(request));
  }

  failAll(error: Error): void {
    for (const fail of [...this.requests.keys()]) fail(error);
  }
}
