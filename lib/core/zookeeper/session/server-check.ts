import { ZkServerRefusedError, type ServerUnfitness } from '../../errors/errors.js';
import { fourLetter } from './four-letter.js';
import { takesMultiRead } from './multi-read-support.js';

/**
 * What a server says of itself through four-letter words on its client port: `srvr` (in
 * ZooKeeper's default whitelist) and `conf` (only when the operator whitelists it). A
 * field is absent when the server did not say (a word not whitelisted).
 */
export interface ServerFacts {
  /** `srvr`: runs ZooKeeper 3.6 or later (takes a `multiRead`). */
  readonly takesMultiRead: boolean;
  /** `srvr`: `leader`, `follower`, `observer`, `standalone`, `read-only`. */
  readonly mode?: string;
  /** `conf`. */
  readonly tickTimeMs?: number;
  readonly minSessionTimeoutMs?: number;
}

/** How long a server may take over its two four-letter replies, at most. */
export const SERVER_CHECK_TIMEOUT_MS = 1_000;

/**
 * Asks `server` (`host:port`, an IPv6 host in brackets) `srvr` and `conf`, each on a short
 * connection of its own, both at once, each within `timeoutMs`. `undefined` when neither
 * answered at all (ask again later); a word the server refuses leaves its fields out.
 */
export async function askServer(
  server: string,
  signal: AbortSignal,
  timeoutMs = SERVER_CHECK_TIMEOUT_MS,
): Promise<ServerFacts | undefined> {
  const colon = server.lastIndexOf(':');
  const host = server.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  const port = Number(server.slice(colon + 1));
  const ask = (word: string) => fourLetter(host, port, word, { signal, timeoutMs }).catch(() => undefined);
  const [srvr, conf] = await Promise.all([ask('srvr'), ask('conf')]);
  if (!srvr && !conf) return undefined;
  return serverFacts(srvr ?? '', conf ?? '');
}

/** The facts in a `srvr` and a `conf` reply (either may be a whitelist refusal, or empty). */
export function serverFacts(srvr: string, conf: string): ServerFacts {
  const mode = /^Mode: ([\w-]+)/m.exec(srvr)?.[1];
  const setting = (name: string): number | undefined => {
    const value = new RegExp(`^${name}=(\\d+)$`, 'm').exec(conf)?.[1];
    return value === undefined ? undefined : Number(value);
  };
  return {
    takesMultiRead: takesMultiRead(srvr),
    ...(mode && { mode }),
    ...definedOnly({ tickTimeMs: setting('tickTime'), minSessionTimeoutMs: setting('minSessionTimeout') }),
  };
}

/**
 * Whether a session with the negotiated timeout `timeoutMs` can rely on this server for
 * the liveness proof. Not through an observer: with an observer master (ZooKeeper 3.6+)
 * its clients' touches reach the leader a ping later than a follower's, which the proof's
 * pair gap does not cover. Not when `timeoutMs < 2 × tickTime`: the pair gap covers a
 * follower's wait for the leader's next ping (`tickTime / 2`) only up to `timeoutMs / 4`.
 * A server that did not say is taken as fit (the docs tell operators what to keep).
 */
export function unfitness(facts: ServerFacts, timeoutMs: number): ServerUnfitness | undefined {
  if (facts.mode === 'observer') return { reason: 'observer' };
  const { tickTimeMs, minSessionTimeoutMs } = facts;
  if (tickTimeMs !== undefined && timeoutMs < 2 * tickTimeMs)
    return { reason: 'session-timeout', tickTimeMs, ...definedOnly({ minSessionTimeoutMs }) };
  return undefined;
}

function definedOnly<T extends object>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/** How long a server that did not answer stays unasked. */
export const ASK_AGAIN_MS = 60_000;

/**
 * One session's answers from its servers, asked once per server (again `ASK_AGAIN_MS`
 * after one that did not answer), shared by whoever needs them (the server check,
 * `MultiReadSupport`).
 */
export class ServerFactsCache {
  private readonly asked = new Map<string, { readonly facts: Promise<ServerFacts | undefined>; readonly at: number }>();
  private readonly stopped = new AbortController();

  constructor(
    private readonly ask: typeof askServer = askServer,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get(server: string): Promise<ServerFacts | undefined> {
    const known = this.asked.get(server);
    if (known && this.now() - known.at < ASK_AGAIN_MS) return known.facts;
    const facts = this.ask(server, this.stopped.signal).catch(() => undefined);
    const entry = { facts, at: this.now() };
    this.asked.set(server, entry);
    // An answer stands; no answer is asked again after a while.
    void facts.then((answer) => answer && this.asked.set(server, { facts, at: Infinity }));
    return facts;
  }

  /** Ends the questions in flight (their sockets close); they answer `undefined`. */
  close(): void {
    this.stopped.abort(new Error('session closed'));
  }
}

/** What `ServerCheck` needs of its session. */
export interface ServerCheckHost {
  /** The server connected now (`host:port`), if any. */
  server(): string | undefined;
  /** The session timeout the server granted. */
  timeoutMs(): number;
  connectionString(): string;
  /** Connected, and not lost. */
  isUp(): boolean;
  /** The server connected now passed its check, or could not be checked. */
  passed(server: string | undefined, facts: ServerFacts | undefined): void;
  /** Leaves the server connected now. */
  leave(): void;
  /** A server was left for the first time in this session. */
  refused(refusal: ZkServerRefusedError): void;
  /** Runs `then` once a re-attached session deleted what its lost object left; at once otherwise. */
  whenSettled(then: () => void): void;
}

/**
 * One session's check of each server it connects to: asks the server about itself
 * (`srvr`, `conf`; once per server, in the background) and leaves it if the liveness
 * proof does not hold through it: an observer, or a timeout under 2 × its tickTime (see
 * `unfitness`). Until it passes, no pair of writes proves the session (a connect still
 * does); a server that cannot say passes.
 */
export class ServerCheck {
  /** What the servers said, shared with `MultiReadSupport`. */
  readonly facts: ServerFactsCache;
  /** Counts connections, so that a server check answering late applies to none but its own. */
  private connection = 0;
  private passedNow = false;
  private lastRefusal: ZkServerRefusedError | undefined;
  private readonly refusedServers = new Set<string>();

  constructor(private readonly host: ServerCheckHost) {
    // Pairs wait for the answer: a short session must not wait the whole check timeout.
    this.facts = new ServerFactsCache((server, signal) =>
      askServer(server, signal, Math.min(SERVER_CHECK_TIMEOUT_MS, Math.round(host.timeoutMs() / 4))),
    );
  }

  /** The server connected now passed its check (or could not be checked). */
  get passed(): boolean {
    return this.passedNow;
  }

  /** The latest server left, if any. */
  get refusal(): ZkServerRefusedError | undefined {
    return this.lastRefusal;
  }

  /** How many distinct servers were left so far. */
  get refusedCount(): number {
    return this.refusedServers.size;
  }

  /** A connection is made: its server is unchecked until `check` says otherwise. */
  connected(): void {
    this.connection++;
    this.passedNow = false;
  }

  /** Checks the server of the connection made last, in the background. */
  check(): void {
    const connection = this.connection;
    const server = this.host.server();
    const asked = server === undefined ? Promise.resolve(undefined) : this.facts.get(server);
    void asked.then((facts) => {
      if (connection !== this.connection || !this.host.isUp()) return;
      const unfit = facts && unfitness(facts, this.host.timeoutMs());
      if (!unfit || server === undefined) {
        this.passedNow = true;
        this.host.passed(server, facts);
        return;
      }
      const leave = (): void => {
        if (connection !== this.connection || !this.host.isUp()) return;
        this.host.leave();
        if (this.refusedServers.has(server)) return; // said once per server and session, not at every pass
        this.refusedServers.add(server);
        this.lastRefusal = new ZkServerRefusedError(server, unfit, this.host.timeoutMs(), this.host.connectionString());
        this.host.refused(this.lastRefusal);
      };
      // A session given back deletes what its lost object left through whichever server
      // took it back, even one it then leaves: leaving first would fail the deletes, and
      // each re-attach there would touch the session again, its old nodes blocking everyone
      // for as long as the client kept trying (an observer as the only other server).
      this.host.whenSettled(leave);
    });
  }

  /** Ends the questions in flight; nothing is asked from now on. */
  close(): void {
    this.facts.close();
  }
}
