/**
 * The bound on one connection attempt. node-zookeeper-client waits for the server's
 * answer to its connect request without limit, so a server that accepts connections but
 * never answers would stall it forever: past the deadline `overdue` runs (the session
 * drops the socket, and the client goes on to the next server).
 */
export class ConnectAttemptDeadline {
  /** When the attempt under way began (`performance.now()` time). */
  startedAt = performance.now();
  private timer: NodeJS.Timeout | undefined;

  begin(boundMs: number, overdue: () => void): void {
    this.startedAt = performance.now();
    clearTimeout(this.timer);
    this.timer = setTimeout(overdue, boundMs);
  }

  end(): void {
    clearTimeout(this.timer);
  }
}
