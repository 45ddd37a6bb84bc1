/**
 * Whether the server at `host:port` answers `multiRead` (ZooKeeper 3.6 and later): `true`
 * or `false` when its `srvr` reply says which version it runs, or when it refuses `srvr`
 * (then `false`: nothing tells); `undefined` when it could not be asked (no reply).
 */
export type MultiReadProbe = (server: string, signal: AbortSignal) => Promise<boolean | undefined>;

/** How long an unanswered probe keeps a server's answer unknown before it is asked again. */
export const PROBE_RETRY_MS = 60_000;

/**
 * Which servers of one session can take a `multiRead`. A ZooKeeper before 3.6 answers an
 * unknown request by closing the connection, so a server is sent one only once it said
 * its version (the `srvr` four-letter word on its client port, on a short connection of
 * its own, asked once per server). Until then, and for a server that cannot say (a
 * whitelist without `srvr`, a proxy in between), reads go one by one as before. A server
 * that refuses one anyway (a downgrade behind the same address) is not sent another.
 */
export class MultiReadSupport {
  private readonly known = new Map<string, boolean | { readonly retryAt: number }>();
  private probing: { readonly server: string; readonly done: Promise<void> } | undefined;
  private readonly stopped = new AbortController();

  constructor(
    /** The server the session is connected to now (`host:port`), if any. */
    private readonly server: () => string | undefined,
    /** Asks a server, e.g. from its `srvr` (see `ServerFactsCache`). */
    private readonly probe: MultiReadProbe,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * True when the server connected now is known to take a `multiRead`. The first time it
   * is asked about a server, it asks that server, in the background: nothing waits for
   * the answer, and until it comes the answer here is `false`.
   */
  usable(): boolean {
    const server = this.server();
    if (server === undefined) return false;
    if (this.known.get(server) === true) return true;
    void this.ready();
    return false;
  }

  /**
   * Settles (never rejects) once whether the server connected now takes a `multiRead` is
   * known, or cannot be; `undefined` when that is so already (nothing to wait for).
   */
  ready(): Promise<void> | undefined {
    const server = this.server();
    if (server === undefined || this.stopped.signal.aborted) return undefined;
    const known = this.known.get(server);
    if (typeof known === 'boolean' || (known && this.now() < known.retryAt)) return undefined;
    if (this.probing?.server === server) return this.probing.done;
    const done = this.probe(server, this.stopped.signal)
      .catch(() => undefined)
      .then((answer) => {
        if (this.probing?.server === server) this.probing = undefined;
        // A refusal meanwhile (`refused`) stands.
        if (typeof this.known.get(server) !== 'boolean')
          this.known.set(server, answer ?? { retryAt: this.now() + PROBE_RETRY_MS });
      });
    this.probing = { server, done };
    return done;
  }

  /** The server refused a `multiRead` (ZooKeeper's UNIMPLEMENTED): it gets no other. */
  refused(server: string | undefined): void {
    if (server !== undefined) this.known.set(server, false);
  }

  /** Ends a probe in flight (its socket closes); nothing is asked from now on. */
  close(): void {
    this.stopped.abort(new Error('session closed'));
  }
}

/** `srvr`'s first line: `Zookeeper version: 3.8.0-5a02a05…, built on …`. */
const VERSION = /^Zookeeper version: (\d+)\.(\d+)\./m;

/** Whether a `srvr` reply names ZooKeeper 3.6 or later (a reply without a version, e.g. a whitelist refusal: no). */
export function takesMultiRead(srvrReply: string): boolean {
  const match = VERSION.exec(srvrReply);
  if (!match) return false;
  const [major, minor] = [Number(match[1]), Number(match[2])];
  return major > 3 || (major === 3 && minor >= 6);
}
