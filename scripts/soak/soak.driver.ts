import { ZkServer } from '../../test/support/zookeeper/zk-server.js';
import { ZkInspector } from '../../test/support/zookeeper/zk-inspector.js';
import { liveSessions } from '../../test/support/zookeeper/live-sessions.js';
import { ClientPool } from './client.pool.js';
import { checkGrowth, type Checkpoint, type GrowthVerdict } from './growth.check.js';
import { GROWTH_RULES } from './growth.limits.js';
import { LockWorkload, seededRandom, type WorkloadStats } from './lock.workload.js';
import { takeSample } from './metrics.probe.js';
import { endChecks, runChecks, type EndState } from './soak.checks.js';
import type { SoakOptions } from './soak.options.js';
import { serverWatches } from './watches.probe.js';

export interface SoakCheckpoint extends Checkpoint {
  readonly seconds: number;
  readonly reconnects: number;
}

export interface SoakResult {
  readonly options: SoakOptions;
  readonly seconds: number;
  readonly cycles: number;
  readonly drops: number;
  readonly reconnects: number;
  readonly sessionsLost: number;
  readonly sessionsChanged: number;
  readonly stats: WorkloadStats;
  readonly checkpoints: SoakCheckpoint[];
  readonly verdicts: GrowthVerdict[];
  readonly end: EndState;
  /** One line per failed check, each naming its metric; empty when the run passed. */
  readonly failures: string[];
}

const ROOT = '/soak';
/** Few names, many workers: most cycles meet another holder or waiter. */
const NAMES = ['orders', 'stock', 'ledger', 'users'];

/**
 * The soak: its own ZooKeeper, `clients` lock clients with `workersPerClient` cycle loops
 * each, one connection dropped every `reconnectEvery` cycles, a checkpoint every
 * cycles / checkpoints cycles (workers parked meanwhile), then every client closed and
 * ZooKeeper checked for what they left.
 */
export async function runSoak(options: SoakOptions, log: (line: string) => void): Promise<SoakResult> {
  const server = new ZkServer({ tickTime: 2000, forceSync: false }); // tickTime 2 s: the 10 s sessions are granted as asked
  // Interrupted (Ctrl-C, a test's timeout), `finally` below never runs: stop the server here, or it outlives us.
  const onSignal = (signal: NodeJS.Signals): void =>
    void server.destroy().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  await server.start();
  const started = performance.now();
  let inspector: ZkInspector | undefined;
  let pool: ClientPool | undefined;
  try {
    inspector = await ZkInspector.connect(server.connectionString);
    await inspector.create(ROOT);
    const clients = (pool = await ClientPool.open(server.connectionString, ROOT, options.clients));
    const workload = new LockWorkload(NAMES);
    const workers = Array.from({ length: options.clients * options.workersPerClient }, (_, i) => ({
      client: clients.clients[i % options.clients],
      random: seededRandom(options.seed * 1000 + i),
    }));
    let issued = 0;
    let drops = 0;
    const reconnects = (): number => clients.clients.reduce((sum, c) => sum + c.reconnects, 0);
    const checkpoints: SoakCheckpoint[] = [];
    const checkpoint = async (): Promise<SoakCheckpoint> => {
      // Each record kept so far is 2 objects (itself and its values): not the library's.
      const values = await takeSample(clients, server.clientPort, 2 * checkpoints.length);
      return { cycles: issued, seconds: (performance.now() - started) / 1000, reconnects: reconnects(), values };
    };
    checkpoints.push(await checkpoint());
    for (let k = 1; k <= options.checkpoints; k++) {
      const until = Math.round((options.cycles * k) / options.checkpoints);
      await Promise.all(
        workers.map(async ({ client, random }) => {
          while (issued < until) {
            if (++issued % options.reconnectEvery === 0) clients.dropConnection(drops++);
            await workload.cycle(client, random);
          }
        }),
      );
      checkpoints.push(await checkpoint());
      const last = checkpoints[checkpoints.length - 1];
      log(
        `checkpoint ${k}/${options.checkpoints}: ${issued} cycles, ${last.seconds.toFixed(1)} s, heap ${(last.values.heapUsed / 1048576).toFixed(2)} MB`,
      );
    }
    const verdicts = checkGrowth(checkpoints, GROWTH_RULES, options.warmupCheckpoints + 1);
    const sessionsChanged = clients.clients.filter((c) => c.backend.client.session.id !== c.firstSessionId).length;
    const sessionsLost = clients.clients.reduce((sum, c) => sum + c.sessionsLost, 0);
    const sessions = clients.sessionIds();
    pool = undefined;
    await clients.close();
    const end: EndState = {
      nodesLeft: await inspector.tree(ROOT),
      watchesLeft: (await serverWatches(server.clientPort, sessions)).total,
      sessionsLeft: [...(await liveSessions(server.clientPort))].filter((id) => sessions.includes(id)).length,
    };
    const run = {
      cycles: issued,
      drops,
      reconnects: reconnects(),
      sessionsLost,
      sessionsChanged,
      stats: workload.stats,
    };
    const failures = [...runChecks(run, checkpoints[checkpoints.length - 1].values, verdicts), ...endChecks(end)];
    return { options, seconds: (performance.now() - started) / 1000, ...run, checkpoints, verdicts, end, failures };
  } finally {
    await pool?.close();
    await inspector?.close();
    await server.destroy();
    process.removeListener('SIGINT', onSignal).removeListener('SIGTERM', onSignal);
  }
}
