import { Agent, request, type IncomingHttpHeaders } from 'node:http';

import { WorkerProcess } from '../support/worker-process';
import { uniqueRoot, zkConnect, zkPort } from '../support/zk-test-env';
import { liveSessions, sessionIdOf } from '../support/zookeeper/live-sessions';
import { ZkInspector } from '../support/zookeeper/zk-inspector';

interface Answer {
  readonly id: string;
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
}

interface Event {
  readonly t: number;
  readonly event: string;
  readonly id?: string;
  readonly port?: number;
  readonly sessionId?: string;
  readonly lockServiceShuttingDown?: boolean;
}

/** One POST on the keep-alive agent: its answer, or the error that came instead (no answer). */
function post(agent: Agent, port: number, id: string): Promise<Answer | { id: string; error: string }> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: `/increment/${id}`, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ id, status: res.statusCode!, headers: res.headers }));
      res.on('error', (error) => resolve({ id, error: (error as NodeJS.ErrnoException).code ?? error.message }));
    });
    req.on('error', (error) => resolve({ id, error: (error as NodeJS.ErrnoException).code ?? error.message }));
    req.end();
  });
}

const SHUTDOWN_GRACE_MS = 5000;

describe('SIGTERM under keep-alive traffic (a Nest app in its own process, enableShutdownHooks)', () => {
  it('refuses new locks at once (503, Retry-After, Connection: close), answers the work under way, and exits within its grace with its session closed', async () => {
    const root = uniqueRoot('keep-alive-shutdown');
    const app = WorkerProcess.spawn('keep-alive-app.worker.ts', {
      connectionString: zkConnect(),
      rootPath: root,
      shutdownGraceMs: SHUTDOWN_GRACE_MS,
      bodyMs: 20,
      windowMs: 1000,
    });
    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    const inspector = await ZkInspector.connect(zkConnect());
    const events = (): Event[] => app.lines.map((line) => JSON.parse(line) as Event);
    let stop = false;
    try {
      const { port, sessionId } = JSON.parse(
        await app.line((line) => line.includes('"listening"'), 'that it listens', 30_000),
      ) as Event;
      // Four keep-alive clients, each sending its next request as soon as the last is answered,
      // until the instance is gone (a new connection is refused).
      let next = 0;
      const outcomes: Array<Answer | { id: string; error: string }> = [];
      const client = async (): Promise<void> => {
        while (!stop) {
          const outcome = await post(agent, port!, String(next++));
          outcomes.push(outcome);
          if ('error' in outcome && outcome.error === 'ECONNREFUSED') return;
        }
      };
      const clients = Promise.all([client(), client(), client(), client()]);
      await app.line(
        (line) => line.includes('"granted"') && events().filter((e) => e.event === 'granted').length >= 20,
        '20 grants',
        30_000,
      );

      const signalledAt = Date.now();
      app.signal('SIGTERM');
      const exitedAt = await Promise.race([
        app.exited.then(() => Date.now()),
        new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), SHUTDOWN_GRACE_MS + 10_000).unref()),
      ]);
      stop = true;
      await clients;
      // No lock granted once shutdown began.
      const log = events();
      const began = log.findIndex((e) => e.event === 'shutdown-began');
      expect(began).toBeGreaterThan(0);
      expect(log.slice(began).filter((e) => e.event === 'granted')).toEqual([]);
      expect(log.find((e) => e.event === 'window')).toMatchObject({ lockServiceShuttingDown: true });
      const grantedBefore = new Set(log.slice(0, began).flatMap((e) => (e.event === 'granted' ? [e.id!] : [])));

      // It exits, within its grace (and the margin a loaded machine needs), while clients still hammer it.
      expect(exitedAt).toBeDefined();
      expect(exitedAt! - signalledAt).toBeLessThan(SHUTDOWN_GRACE_MS + 10_000);

      const answers = outcomes.filter((o): o is Answer => 'status' in o);
      // Answers during shutdown close their connection; a refused call is 503 with Retry-After.
      const refused = answers.filter((a) => a.status !== 201);
      for (const answer of refused) {
        expect(answer).toMatchObject({ status: 503, headers: { 'retry-after': '1', connection: 'close' } });
      }
      // More refusals than the four calls that can have been waiting when shutdown began: calls
      // made during it (the window keeps the server taking connections) were refused too.
      expect(refused.length).toBeGreaterThan(4);
      // Every 2xx answer is a call granted before shutdown began, and every committed work got its 2xx.
      const answered = new Set(answers.filter((a) => a.status === 201).map((a) => a.id));
      for (const id of answered) expect(grantedBefore.has(id)).toBe(true);
      const records = (await inspector.children(`${root}-records`)) ?? [];
      const committed = new Set(records.filter((r) => r.startsWith('commit-')).map((r) => r.slice('commit-'.length)));
      expect([...committed].sort()).toEqual([...answered].sort());

      // Its session is closed: nothing of it left in ZooKeeper.
      expect((await liveSessions(zkPort())).has(sessionIdOf(sessionId!))).toBe(false);
      expect((await inspector.children(`${root}/counter`)) ?? []).toEqual([]);
    } finally {
      stop = true;
      if (app.running) await app.kill();
      agent.destroy();
      await inspector.removeTree(root).catch(() => undefined);
      await inspector.removeTree(`${root}-records`).catch(() => undefined);
      await inspector.close();
    }
  });
});
