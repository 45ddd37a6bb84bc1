import { setTimeout as sleep } from 'node:timers/promises';

import { fourLetter } from '../../lib/core/zookeeper/session/four-letter.js';
import { RawZk } from '../raw-client.js';

/**
 * Tells the orchestrator when waiters are really queued (their node created and their
 * watch set) before it lets a holder release, so every measured handoff is a true
 * handoff: release, notification, re-read, grant. It uses its own session, outside every
 * implementation's counters, and only between measurements.
 *
 * Watches are read from the servers' `wchc` tables (four-letter word), summed over every
 * server of the connection string (a watch lives on the server its session is connected
 * to). When a server refuses `wchc`, it falls back to a fixed pause once the nodes are there.
 */
export class QueueProbe {
  /** 'wchc' once a reply proved the server answers it; 'pause' after a refusal. */
  mode: 'wchc' | 'pause' | 'unknown' = 'unknown';

  private constructor(
    readonly zk: RawZk,
    /** The servers it was opened on (the scale scenarios ask each of them four-letter words too). */
    readonly connectionString: string,
    private readonly servers: ReadonlyArray<{ host: string; port: number }>,
  ) {}

  static async open(connectionString: string): Promise<QueueProbe> {
    const servers = connectionString
      .split('/')[0]
      .split(',')
      .map((hostPort) => {
        const [host, port] = hostPort.split(':');
        return { host, port: Number(port) };
      });
    return new QueueProbe(await RawZk.connect(connectionString), connectionString, servers);
  }

  /** Waits until `dir` has at least `nodes` children and `watches` watches on nodes under it. */
  async waitQueued(dir: string, nodes: number, watches: number, timeoutMs = 30_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    let pause = 0.2;
    for (;;) {
      const children = await this.zk.children(dir);
      if (children.length >= nodes) {
        if (watches === 0) return;
        const seen = await this.watchesUnder(dir);
        if (seen === undefined) {
          await sleep(25); // no watch table: give the waiters time to send their watch
          return;
        }
        if (seen >= watches) return;
      }
      if (Date.now() > until) {
        throw new Error(
          `queue probe: ${dir} has ${children.length}/${nodes} nodes (and not ${watches} watches) after ${timeoutMs} ms`,
        );
      }
      await sleep(pause);
      pause = Math.min(pause * 2, 5);
    }
  }

  /** "3.8.0-…" from `srvr`, or "unknown". */
  async serverVersion(): Promise<string> {
    const { host, port } = this.servers[0];
    const reply = await fourLetter(host, port, 'srvr').catch(() => '');
    return /Zookeeper version: ([^,\n]+)/.exec(reply)?.[1]?.trim() ?? 'unknown';
  }

  close(): Promise<void> {
    return this.zk.close();
  }

  /** Watches on `dir/...` in every server's `wchc`, or undefined if a server will not say. */
  private async watchesUnder(dir: string): Promise<number | undefined> {
    if (this.mode === 'pause') return undefined;
    const replies = await Promise.all(
      this.servers.map(({ host, port }) => fourLetter(host, port, 'wchc').catch(() => null)),
    );
    if (replies.some((reply) => reply === null || /not executed|whitelist/i.test(reply))) {
      this.mode = 'pause'; // "wchc is not executed because it is not in the whitelist."
      return undefined;
    }
    this.mode = 'wchc';
    const prefix = `${dir}/`;
    let count = 0;
    for (const reply of replies) for (const line of reply!.split('\n')) if (line.trim().startsWith(prefix)) count++;
    return count;
  }
}
