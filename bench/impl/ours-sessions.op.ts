import type { LockHandle } from '../../lib/core/port/lock-backend.js';
import type { ZkLockBackend } from '../../lib/core/zookeeper/zk-lock-backend.js';
import { addCounts } from '../support/request-counts.js';
import { WorkerChannel } from '../support/worker-channel.js';
import { WorkerSpawns } from '../support/worker-spawn.js';
import type {
  Counts,
  SessionsCloseResult,
  SessionsHoldParams,
  SessionsHoldResult,
  SessionsOpenParams,
  SessionsOpenResult,
  SessionsStatsResult,
} from '../workers/impl.protocol.js';
import { counts, now, range, type OursSessions } from './bench-impl.js';

/**
 * Scenario 11's sessions, as an application fleet has them: one `ZkLockBackend` (one
 * session) each, many per process, many processes. The worker the orchestrator talks to
 * starts `processes` ours workers of its own (kept for the next rounds, stopped with it)
 * and splits every `sessions.*` op between them; each of those hosts its share itself
 * (`processes: 0`). The hosts run no warm-up: nothing here is timed that JIT would change
 * much (connects, and windows of idle time).
 */
export class SessionFleet {
  private hosts: WorkerChannel[] = [];
  private backends: ZkLockBackend[] = [];
  private held: LockHandle[] = [];

  constructor(
    private readonly sessions: OursSessions,
    private readonly connectionString: string,
    private readonly base: string,
  ) {}

  async open({ sessions, processes }: SessionsOpenParams): Promise<SessionsOpenResult> {
    if (processes === 0) return this.openHere(sessions);
    await this.startHosts(processes);
    const start = now();
    const parts = await Promise.all(
      this.hosts.map((host, i) =>
        host.request<SessionsOpenResult>('sessions.open', { sessions: share(sessions, processes, i), processes: 0 }),
      ),
    );
    return {
      elapsedNs: Number(now() - start),
      connectNs: parts.flatMap((p) => p.connectNs),
      sessionIds: parts.flatMap((p) => p.sessionIds),
    };
  }

  async hold({ name, holders }: SessionsHoldParams): Promise<SessionsHoldResult> {
    if (!this.hosts.length) {
      const start = this.held.length;
      const acquireNs = await Promise.all(
        this.backends.slice(start, start + holders).map(async (backend, i) => {
          const asked = now();
          this.held.push(await backend.acquire(`${name}-${start + i}`));
          return Number(now() - asked);
        }),
      );
      return { acquireNs };
    }
    const parts = await Promise.all(
      this.hosts.map((host, i) =>
        host.request<SessionsHoldResult>('sessions.hold', {
          name: `${name}-p${i}`,
          holders: share(holders, this.hosts.length, i),
        }),
      ),
    );
    return { acquireNs: parts.flatMap((p) => p.acquireNs) };
  }

  /** Releases what `hold` took, until ZooKeeper confirmed every release. */
  async release(): Promise<object> {
    if (this.hosts.length) {
      await Promise.all(this.hosts.map((host) => host.request('sessions.release')));
      return {};
    }
    const held = this.held;
    this.held = [];
    await Promise.all(held.map((handle) => handle.release()));
    await Promise.all(held.map((handle) => handle.releaseConfirmed));
    return {};
  }

  async stats(): Promise<SessionsStatsResult> {
    if (this.hosts.length) {
      const parts = await Promise.all(this.hosts.map((host) => host.request<SessionsStatsResult>('sessions.stats')));
      const sum: Counts = {};
      for (const part of parts) addCounts(sum, part.counts);
      return {
        counts: sum,
        writes: parts.reduce((total, p) => total + p.writes, 0),
        cpuNs: parts.reduce((total, p) => total + p.cpuNs, 0),
      };
    }
    const sum: Counts = {};
    for (const backend of this.backends) addCounts(sum, counts(backend));
    const writes = this.backends.reduce((total, backend) => total + backend.client.counter.writesSent(), 0);
    const { user, system } = process.cpuUsage(); // µs, this process
    return { counts: sum, writes, cpuNs: (user + system) * 1000 };
  }

  /** Closes every session (the hosts stay up for the next round). */
  async close(): Promise<SessionsCloseResult> {
    const start = now();
    if (this.hosts.length) await Promise.all(this.hosts.map((host) => host.request('sessions.close')));
    const backends = this.backends;
    this.backends = [];
    this.held = [];
    await Promise.all(backends.map((backend) => this.sessions.close(backend)));
    return { elapsedNs: Number(now() - start) };
  }

  /** Stops the hosts (their workers close whatever sessions they still have). */
  async stop(): Promise<void> {
    const hosts = this.hosts;
    this.hosts = [];
    await Promise.allSettled(hosts.map((host) => host.stop()));
  }

  /** Connects `sessions` here, `CONNECT_BATCH` at a time, each batch at once. */
  private async openHere(sessions: number): Promise<SessionsOpenResult> {
    const start = now();
    const opened: Array<{ ns: number; id: string }> = [];
    for (let from = 0; from < sessions; from += CONNECT_BATCH) {
      const batch = range(Math.min(CONNECT_BATCH, sessions - from)).map(async () => {
        const asked = now();
        const backend = await this.sessions.open();
        this.backends.push(backend);
        return { ns: Number(now() - asked), id: backend.client.session.id };
      });
      opened.push(...(await Promise.all(batch)));
    }
    return {
      elapsedNs: Number(now() - start),
      connectNs: opened.map((o) => o.ns),
      sessionIds: opened.map((o) => o.id),
    };
  }

  private async startHosts(processes: number): Promise<void> {
    if (this.hosts.length === processes) return;
    await this.stop();
    const spawns = new WorkerSpawns(0);
    const started = await Promise.allSettled(
      range(processes).map(async (i) => {
        const spawn = await spawns.spawn('ours', i, this.connectionString, this.base);
        return (await WorkerChannel.start({ ...spawn, label: `session host ${i + 1}` })).channel;
      }),
    );
    this.hosts = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) {
      await this.stop();
      throw failed.reason;
    }
  }
}

/**
 * Sessions one process connects at once. A fleet's processes each connect a few sessions as
 * they start; a hundred connects at once in one process, on a shared 2-core machine, left
 * one of them without a session after the 10 s connect timeout.
 */
const CONNECT_BATCH = 10;

/** Host `i`'s share of `total` over `parts`: as even as whole numbers allow. */
function share(total: number, parts: number, i: number): number {
  return Math.floor(total / parts) + (i < total % parts ? 1 : 0);
}
