import { setTimeout as sleep } from 'node:timers/promises';

import { processCpuNs } from '../support/cpu.js';
import { NOTIFICATION } from '../support/request-counts.js';
import { median, percentile } from '../support/sample-stats.js';
import { lastZxid, serversOf } from '../support/server-state.js';
import { mntrSum, serverHeapAfterGc, sessionsListed } from '../support/server-stats.js';
import type { WorkerChannel } from '../support/worker-channel.js';
import type {
  SessionsCloseResult,
  SessionsHoldResult,
  SessionsOpenResult,
  SessionsStatsResult,
} from '../workers/impl.protocol.js';
import { byImpl, metricRow, type Scenario, type ScenarioContext } from './scenario.js';

/** What the servers and the sessions' processes did over one window of time. */
export interface WindowFigures {
  readonly ms: number;
  /** Committed meanwhile: the growth of the last zxid (`srvr`). */
  readonly transactions: number;
  /** Packets the servers received, summed (`mntr` zk_packets_received): every request and every ping. */
  readonly serverPackets: number;
  /** CPU time of the server processes, summed; null when they are not known. */
  readonly serverCpuNs: number | null;
  /** Requests the library sent (its own counter: the liveness reads and heartbeats included). */
  readonly clientRequests: number;
  /**
   * Of those, writes (the heartbeat while holding, creates, deletes): what these sessions
   * asked the ensemble to commit, where `transactions` also counts the servers' own writes
   * (their deletion of empty container directories, a session's expiry).
   */
  readonly clientWrites: number;
  /** CPU time of every process hosting the sessions. */
  readonly clientCpuNs: number;
}

export interface SessionsSample {
  readonly sessions: number;
  readonly processes: number;
  readonly holders: number;
  /** From the first connect to the last session connected. */
  readonly connectAllMs: number;
  readonly connectP50Ms: number;
  readonly connectP99Ms: number;
  /**
   * Of these sessions, how many the servers listed with every one open: connections
   * (`cons`; on each server, in the connection string's order), sessions (`dump`).
   */
  readonly listed: { readonly connections: number; readonly perServer: number[]; readonly sessions: number };
  /** The servers' heap after a full collection, every session open minus before, per session; null: not measured. */
  readonly serverHeapPerSessionBytes: number | null;
  readonly idle: WindowFigures;
  readonly holdAcquireP50Ms: number;
  /** `holders` holding a lock each, the others idle. */
  readonly hold: WindowFigures;
  readonly closeAllMs: number;
  /** The same once every session was closed: none should be left. */
  readonly left: Omit<SessionsSample['listed'], 'perServer'>;
}

/** After the connects (or the grants), before a window: the last writes committed, first liveness reads sent (or as long as the window). */
const SETTLE_MS = 1_000;

/**
 * 11. Many sessions of ours, one backend each, spread over worker processes (and, on an
 * ensemble whose connection string names every server, over the servers): the time to
 * connect them all; what they cost the ensemble while idle (transactions by the last zxid,
 * packets and CPU of the servers, requests and CPU of the clients); the same with some of
 * them holding a lock; and, once closed, that the servers hold none of them any more. The
 * transactions are counted by the zxid, so nothing else may write meanwhile: scenarios run
 * one at a time.
 */
export const sessionsScenario: Scenario<SessionsSample> = {
  id: 11,
  key: 'sessions',
  title: 'many connected sessions: idle and holding cost',
  impls: ['ours'],
  slots: 1,

  async run(ctx, impl) {
    const { sessions, processes, idleMs, holders, holdMs } = ctx.counts.sessions;
    const settleMs = Math.min(SETTLE_MS, idleMs);
    const worker = ctx.worker(impl);
    const servers = serversOf(ctx.probe.connectionString);
    const heapStart = await serverHeapAfterGc(ctx.serverPids());
    let opened: SessionsOpenResult;
    let open: Omit<SessionsSample, 'closeAllMs' | 'left'>;
    let closed: SessionsCloseResult;
    try {
      // Inside: sessions that did connect are closed also when others failed to.
      opened = await worker.request<SessionsOpenResult>('sessions.open', { sessions, processes });
      await sleep(settleMs);
      const idle = await measureWindow(ctx, worker, idleMs);
      const listed = await listedSessions(servers, opened.sessionIds);
      const heapOpen = heapStart === null ? null : await serverHeapAfterGc(ctx.serverPids());
      const held = await worker.request<SessionsHoldResult>('sessions.hold', {
        name: `sessions-${ctx.round}`,
        holders,
      });
      await sleep(settleMs);
      const hold = await measureWindow(ctx, worker, holdMs);
      await worker.request('sessions.release');
      open = {
        sessions,
        processes,
        holders,
        connectAllMs: opened.elapsedNs / 1e6,
        connectP50Ms: median(opened.connectNs) / 1e6,
        connectP99Ms: percentile(opened.connectNs, 99) / 1e6,
        listed,
        serverHeapPerSessionBytes: heapStart === null || heapOpen === null ? null : (heapOpen - heapStart) / sessions,
        idle,
        holdAcquireP50Ms: median(held.acquireNs) / 1e6,
        hold,
      };
    } finally {
      closed = await worker.request<SessionsCloseResult>('sessions.close');
    }
    return { ...open, closeAllMs: closed.elapsedNs / 1e6, left: await leftAfterClose(servers, opened.sessionIds) };
  },

  describe: (s) =>
    `${s.sessions} sessions connected in ${(s.connectAllMs / 1000).toFixed(2)} s` +
    (s.listed.perServer.length > 1 ? ` (${s.listed.perServer.join(' / ')} by server)` : '') +
    '; idle ' +
    `${perSec(s.idle.transactions, s.idle).toFixed(2)} tx/s (${s.idle.clientWrites} writes sent), ${perSec(s.idle.serverPackets, s.idle).toFixed(0)} packets/s, ` +
    `servers ${share(s.idle.serverCpuNs, s.idle)}; ${s.holders} holding ${perSec(s.hold.transactions, s.hold).toFixed(1)} tx/s; ` +
    `left ${s.left.connections} connections, ${s.left.sessions} sessions`,

  summarize(samples) {
    const first = Object.values(samples).flat()[0];
    const [n, held] = [first?.sessions ?? 0, first?.holders ?? 0];
    const row = (id: string, label: string, unit: string, value: (s: SessionsSample) => number) =>
      metricRow({
        id: `sessions.${id}`,
        scenario: 11,
        label,
        unit,
        better: 'lower',
        rounds: byImpl(samples, value),
        ratios: false,
      });
    // Not measured (null) shows as "–".
    const orNaN = (value: (s: SessionsSample) => number | null) => (s: SessionsSample) => value(s) ?? Number.NaN;
    const ours = samples.ours ?? [];
    return {
      metrics: [
        row('connectAllMs', `connect ${n} sessions (${first?.processes ?? 0} processes)`, 'ms', (s) => s.connectAllMs),
        row('connectP99Ms', `connect ${n} sessions: one session's connect, p99`, 'ms', (s) => s.connectP99Ms),
        row(
          'connections',
          `of ${n} sessions, connections the servers list (cons)`,
          'connections',
          (s) => s.listed.connections,
        ),
        row(
          'serverSessions',
          `of ${n} sessions, sessions the servers track (dump)`,
          'sessions',
          (s) => s.listed.sessions,
        ),
        row(
          'serverHeapPerSessionKB',
          'server heap per connected session (after a full GC)',
          'KB/session',
          orNaN((s) => (s.serverHeapPerSessionBytes === null ? null : s.serverHeapPerSessionBytes / 1024)),
        ),
        row('idleTxPerSec', `${n} idle sessions: transactions, all`, 'tx/s', (s) =>
          perSec(s.idle.transactions, s.idle),
        ),
        row('idleWritesPerSec', `${n} idle sessions: writes they send, all`, '/s', (s) =>
          perSec(s.idle.clientWrites, s.idle),
        ),
        row(
          'idleTxPerSessionPerSec',
          'idle session: transactions',
          'tx/s',
          (s) => perSec(s.idle.transactions, s.idle) / s.sessions,
        ),
        row(
          'idlePacketsPerSessionPerSec',
          "idle session: packets the servers receive (the library's liveness reads, the client's pings)",
          '/s',
          (s) => perSec(s.idle.serverPackets, s.idle) / s.sessions,
        ),
        row(
          'idleRequestsPerSessionPerSec',
          'idle session: requests the library sends (liveness reads)',
          '/s',
          (s) => perSec(s.idle.clientRequests, s.idle) / s.sessions,
        ),
        row(
          'idleServerCpu',
          `servers' CPU while ${n} sessions are idle`,
          '% of a core',
          orNaN((s) => percent(s.idle.serverCpuNs, s.idle)),
        ),
        row(
          'idleClientCpu',
          `client processes' CPU while ${n} sessions are idle`,
          '% of a core',
          orNaN((s) => percent(s.idle.clientCpuNs, s.idle)),
        ),
        row(
          'holderTxPerSec',
          `${held} of them holding a lock each: transactions per holder`,
          'tx/s',
          (s) => perSec(s.hold.transactions, s.hold) / s.holders,
        ),
        row(
          'holdServerCpu',
          `servers' CPU while ${held} hold and the others idle`,
          '% of a core',
          orNaN((s) => percent(s.hold.serverCpuNs, s.hold)),
        ),
        row('closeAllMs', `close ${n} sessions`, 'ms', (s) => s.closeAllMs),
      ],
      roundTrips: [],
      problems: ours.flatMap((s, i) =>
        s.left.connections > 0 || s.left.sessions > 0
          ? [
              `11: round ${i + 1}: of ${s.sessions} sessions closed, the servers still list ${s.left.connections} connection(s) (cons) and ${s.left.sessions} session(s) (dump)`,
            ]
          : [],
      ),
    };
  },
};

/** Waits `ms` while the sessions are left alone, and reads what the servers and the clients did meanwhile. */
async function measureWindow(ctx: ScenarioContext, worker: WorkerChannel, ms: number): Promise<WindowFigures> {
  const servers = serversOf(ctx.probe.connectionString);
  const read = async () => {
    const [zxid, packets, client] = await Promise.all([
      lastZxid(servers[0]),
      mntrSum(servers).then((m) => m.zk_packets_received),
      worker.request<SessionsStatsResult>('sessions.stats'),
    ]);
    const requests = Object.entries(client.counts).reduce((sum, [op, k]) => (op === NOTIFICATION ? sum : sum + k), 0);
    return {
      zxid,
      packets,
      requests,
      writes: client.writes,
      clientCpuNs: client.cpuNs,
      serverCpuNs: processCpuNs(ctx.serverPids()),
    };
  };
  const before = await read();
  const start = process.hrtime.bigint();
  await sleep(ms);
  const elapsedMs = Number(process.hrtime.bigint() - start) / 1e6;
  const after = await read();
  return {
    ms: elapsedMs,
    transactions: Number(after.zxid - before.zxid),
    serverPackets: after.packets - before.packets,
    serverCpuNs: ctx.serverPids().length ? after.serverCpuNs - before.serverCpuNs : null,
    clientRequests: after.requests - before.requests,
    clientWrites: after.writes - before.writes,
    clientCpuNs: after.clientCpuNs - before.clientCpuNs,
  };
}

/**
 * Of the sessions `ids`, those the servers list: by their connections (`cons`, server by
 * server: how they spread) and as sessions (`dump`).
 */
async function listedSessions(servers: readonly string[], ids: readonly string[]): Promise<SessionsSample['listed']> {
  const [perServer, sessions] = await Promise.all([
    Promise.all(servers.map((address) => sessionsListed([address], 'cons', ids))),
    sessionsListed(servers, 'dump', ids),
  ]);
  return { connections: perServer.reduce((a, b) => a + b, 0), perServer, sessions };
}

/**
 * Of the closed sessions `ids`, those the servers still list, once none is or 10 s have
 * passed (a server drops a closed session's connection a moment after the close returns).
 * By id, so that other clients of a shared server do not count.
 */
async function leftAfterClose(servers: readonly string[], ids: readonly string[]): Promise<SessionsSample['left']> {
  const until = Date.now() + 10_000;
  for (;;) {
    const { connections, sessions } = await listedSessions(servers, ids);
    const left = { connections, sessions };
    if ((left.connections === 0 && left.sessions === 0) || Date.now() > until) return left;
    await sleep(200);
  }
}

function perSec(count: number, window: WindowFigures): number {
  return count / (window.ms / 1000);
}

/** CPU time over the window as a share of one core, in %; null when not measured. */
function percent(cpuNs: number | null, window: WindowFigures): number | null {
  return cpuNs === null ? null : (cpuNs / 1e6 / window.ms) * 100;
}

function share(cpuNs: number | null, window: WindowFigures): string {
  const value = percent(cpuNs, window);
  return value === null ? 'CPU n/a' : `${value.toFixed(1)}% CPU`;
}
