import { mkdtempSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { freePort } from '../free-port';
import { ZkServer } from './zk-server';

/** Three (or `size`) ZooKeeper servers on loopback, forming one ensemble. */
export class ZkEnsemble {
  readonly servers: ZkServer[] = [];
  private readonly root = mkdtempSync(join(tmpdir(), 'zk-lock-ensemble-'));

  private constructor() {}

  /** `extraConfig`: further `zoo.cfg` lines of server `index` (e.g. a `maxSessionTimeout` of its own). */
  static async start(
    size = 3,
    tickTime = 200,
    extraConfig: (index: number) => readonly string[] = () => [],
  ): Promise<ZkEnsemble> {
    const ensemble = new ZkEnsemble();
    const ports = await Promise.all(Array.from({ length: size * 3 }, () => freePort()));
    const peers = Array.from(
      { length: size },
      (_, i) => `server.${i + 1}=127.0.0.1:${ports[3 * i + 1]}:${ports[3 * i + 2]}`,
    );
    for (let i = 0; i < size; i++) {
      const dataDir = join(ensemble.root, `s${i + 1}`);
      mkdirSync(dataDir, { recursive: true });
      ensemble.servers.push(
        new ZkServer({ tickTime, myid: i + 1, peers, dataDir, clientPort: ports[3 * i], extraConfig: extraConfig(i) }),
      );
    }
    await Promise.all(ensemble.servers.map((s) => s.start(false)));
    await Promise.all(ensemble.servers.map((s) => s.waitServing()));
    return ensemble;
  }

  get connectionString(): string {
    return this.servers.map((s) => s.connectionString).join(',');
  }

  /** Index of the current leader; waits for an election to finish. */
  async leader(timeoutMs = 20_000): Promise<number> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      // eslint-disable-next-line @typescript-eslint/await-thenable -- some entries are plain values, on purpose
      const modes = await Promise.all(this.servers.map((s) => (s.running ? s.mode() : undefined)));
      const index = modes.indexOf('leader');
      if (index >= 0) return index;
      if (Date.now() > until) throw new Error(`no leader after ${timeoutMs} ms (modes: ${modes.join(', ')})`);
      await sleep(50);
    }
  }

  kill(index: number): Promise<void> {
    return this.servers[index].stop('SIGKILL');
  }

  async restart(index: number): Promise<void> {
    await this.servers[index].start(false);
    await this.servers[index].waitServing();
  }

  async destroy(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.stop()));
    rmSync(this.root, { recursive: true, force: true });
  }
}
