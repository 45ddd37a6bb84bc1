import type { ServerUnfitness } from '../../errors/errors.js';
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
