import { connect, type Socket } from 'node:net';

/** Turns what the source sends into what the target gets (the election greeting rewrite). */
export interface OutboundFilter {
  feed(chunk: Buffer): Buffer;
  flush(): Buffer;
}

export interface LinkHooks {
  targetPort: number;
  outbound?: OutboundFilter;
  /** Bytes handed on to the target, or back to the source. */
  delivered(direction: Direction, bytes: number): void;
  /** How long bytes to the target wait before they are sent (a slow link); 0: none. */
  delayToTargetMs?(): number;
  /** A connection to the target was established. */
  connected(): void;
  /** Both sockets are gone. */
  closed(link: PeerLink): void;
}

type Direction = 'toTarget' | 'toSource';

/** How often, and how long, a refused connection to the target is tried again. */
const DIAL_RETRY_MS = 100;
const DIAL_ATTEMPTS = 10;

/**
 * One proxied connection from a ZooKeeper server (the source, which connected to the
 * proxy) to one of its peers (the target). While held, nothing moves in either direction,
 * not even an end or an error: both sockets are paused and every event they raise waits in
 * a backlog, so neither server sees a byte, a FIN or an RST, as in a network partition.
 * `release` replays the backlog in order, the way TCP delivers once a partition heals. A
 * link accepted while held connects to the target only on release: the partition
 * swallowed the SYN.
 */
export class PeerLink {
  private target: Socket | undefined;
  /** The proxy wants bytes to move (it is not partitioned). */
  private wanted = false;
  /** Events pass: wanted, and the target is connected. */
  private flowing = false;
  private readonly backlog: Array<() => void> = [];
  private readonly open = new Set<Socket>();
  private dialing: Socket | undefined;
  private retry: NodeJS.Timeout | undefined;
  private aborted = false;
  /** Bytes to the target waiting out a slow link's delay, in the order they came. */
  private readonly delayed: Array<{ due: number; send: () => void }> = [];
  private delayTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly source: Socket,
    private readonly hooks: LinkHooks,
  ) {
    this.watch(source, 'toTarget');
  }

  hold(): void {
    this.wanted = false;
    this.flowing = false;
    this.source.pause();
    this.target?.pause();
    this.stopDialing(); // a SYN sent into a partition is lost
  }

  release(): void {
    if (this.aborted) return;
    this.wanted = true;
    if (this.target) this.flow();
    else if (!this.dialing && !this.retry) this.dial(1);
  }

  destroy(): void {
    this.aborted = true;
    this.stopDialing();
    this.backlog.length = 0;
    clearTimeout(this.delayTimer);
    this.delayed.length = 0;
    this.source.destroy();
    this.target?.destroy();
  }

  private flow(): void {
    if (this.flowing || !this.wanted || this.aborted) return;
    this.flowing = true;
    for (const event of this.backlog.splice(0)) event();
    this.source.resume();
    this.target?.resume();
  }

  /**
   * Connects to the target, trying again for a while when refused. The source's own
   * connect already succeeded (the proxy accepted it), so it can no longer be refused
   * and retry: without this, a follower that calls a new leader a moment before the
   * leader binds its port would see its connection close right after it opened, and
   * give up where ZooKeeper, refused, retries.
   */
  private dial(attempt: number): void {
    const socket = connect({ host: '127.0.0.1', port: this.hooks.targetPort, allowHalfOpen: true });
    this.dialing = socket;
    const refused = () => {
      this.dialing = undefined;
      socket.destroy();
      if (attempt >= DIAL_ATTEMPTS) return this.abort();
      this.retry = setTimeout(() => {
        this.retry = undefined;
        this.dial(attempt + 1);
      }, DIAL_RETRY_MS);
    };
    socket.once('error', refused);
    socket.once('connect', () => {
      socket.removeListener('error', refused);
      this.dialing = undefined;
      this.target = socket;
      this.hooks.connected();
      this.watch(socket, 'toSource');
      socket.pause(); // until flow(): the link may have been held meanwhile
      this.flow();
    });
  }

  private stopDialing(): void {
    clearTimeout(this.retry);
    this.retry = undefined;
    this.dialing?.destroy();
    this.dialing = undefined;
  }

  /** Gives up on a target that never answered: the source sees its connection reset. */
  private abort(): void {
    this.destroy();
    this.hooks.closed(this);
  }

  /** Routes every event of `socket` through the hold; `direction` is where its bytes go. */
  private watch(socket: Socket, direction: Direction): void {
    this.open.add(socket);
    // Both servers run with TCP_NODELAY; Nagle in the proxy would add delayed-ACK stalls.
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.whenFlowing(() => this.forward(direction, chunk)));
    socket.on('end', () => this.whenFlowing(() => this.endOther(direction)));
    socket.on('error', () => undefined); // 'close' follows, with hadError set
    socket.on('close', (hadError: boolean) => this.whenFlowing(() => this.closedSide(socket, hadError)));
  }

  private whenFlowing(event: () => void): void {
    if (this.flowing) event();
    else if (!this.aborted) this.backlog.push(event);
  }

  private forward(direction: Direction, chunk: Buffer): void {
    const bytes = direction === 'toTarget' && this.hooks.outbound ? this.hooks.outbound.feed(chunk) : chunk;
    if (bytes.length === 0) return;
    const delay = direction === 'toTarget' ? (this.hooks.delayToTargetMs?.() ?? 0) : 0;
    const send = (): void => {
      if (this.aborted) return;
      this.other(direction).write(bytes);
      this.hooks.delivered(direction, bytes.length);
    };
    if (delay === 0 && this.delayed.length === 0) return send();
    // Queued behind what waits already: when the delay shrinks or ends, later bytes must
    // not overtake earlier ones (a reordered quorum stream breaks the peers for good).
    this.delayed.push({ due: performance.now() + delay, send });
    this.sendDelayed();
  }

  private sendDelayed(): void {
    if (this.delayTimer) return;
    while (this.delayed.length > 0 && this.delayed[0].due <= performance.now()) this.delayed.shift()!.send();
    if (this.delayed.length === 0) return;
    this.delayTimer = setTimeout(() => {
      this.delayTimer = undefined;
      this.sendDelayed();
    }, this.delayed[0].due - performance.now());
  }

  /** Half-closes onward, as TCP does: the other server still may answer. */
  private endOther(direction: Direction): void {
    if (direction === 'toTarget' && this.hooks.outbound) {
      const rest = this.hooks.outbound.flush();
      if (rest.length > 0) this.forward(direction, rest);
    }
    this.other(direction).end();
  }

  private closedSide(socket: Socket, hadError: boolean): void {
    this.open.delete(socket);
    // A reset on one side is passed on as an abort of the other.
    if (hadError) for (const other of this.open) other.destroy();
    if (this.open.size === 0) this.hooks.closed(this);
  }

  private other(direction: Direction): Socket {
    // Events flow only once the target is connected.
    return direction === 'toTarget' ? this.target! : this.source;
  }
}
