import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { basename } from 'node:path';

import { LockService, ZK_LOCK_BACKEND, ZkLockModule, type ZkLockBackend, type ZkLockHandle } from '../../lib/index';
import { waitUntil } from '../support/wait-until';
import { WorkerProcess } from '../support/worker-process';
import { uniqueRoot } from '../support/zk-test-env';
import { liveSessions, sessionIdOf } from '../support/zookeeper/live-sessions';
import { ZkInspector } from '../support/zookeeper/zk-inspector';
import { ZkServer } from '../support/zookeeper/zk-server';

interface HolderEvent {
  event: string;
  [field: string]: unknown;
}
const parse = (line: string): HolderEvent => JSON.parse(line) as HolderEvent;

/**
 * Every option at its default, on a server that grants the default 10 s session (tickTime
 * 500: at most 20 × 500 ms): a holder process dies by SIGKILL while another instance waits
 * with the module's default `acquireTimeoutMs`. The dead session ends at most a tick after
 * the session timeout counted from its last touch; the waiter, queued before the crash,
 * must still be waiting then, and be granted.
 */
describe('defaults at a crash: a waiter outlasts a killed holder’s session', () => {
  const server = new ZkServer({ tickTime: 500 });
  const rootPath = uniqueRoot('crash-default');
  let inspector: ZkInspector;
  let app: INestApplication | undefined;
  let holder: WorkerProcess | undefined;
  beforeAll(async () => {
    await server.start();
    inspector = await ZkInspector.connect(server.connectionString);
  }, 60_000);
  afterAll(async () => {
    await holder?.kill();
    await app?.close();
    await inspector?.removeTree(rootPath);
    await inspector?.close();
    await server.destroy();
  });

  it('with default options, the waiter is granted once the dead session ends, not timed out', async () => {
    // The holder asks for no sessionTimeoutMs: the library's default, which this server grants.
    holder = WorkerProcess.spawn('holder.worker.ts', {
      connectionString: server.connectionString,
      rootPath,
      name: 'job',
      traceSockets: true,
    });
    const held = parse(await holder.line((line) => parse(line).event === 'held', 'held'));
    const session = parse(await holder.line((line) => parse(line).event === 'session', 'its session'));
    expect(session.timeoutMs).toBe(10_000);

    const moduleRef = await Test.createTestingModule({
      imports: [ZkLockModule.forRoot({ connectionString: server.connectionString, rootPath })],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    const backend = app.get<ZkLockBackend>(ZK_LOCK_BACKEND);
    expect(backend.status().timeoutMs).toBe(10_000);
    const locks = app.get(LockService);

    const dir = backend.pathOf('job');
    let nodesInBody: string[] | null = null;
    const waiting = locks.withLock('job', async (handle) => {
      nodesInBody = await inspector.children(dir);
      return basename((handle as ZkLockHandle).path);
    });
    const outcome = waiting.then(
      (node) => ({ node }),
      (error: Error) => ({ error: error.name }),
    );
    await waitUntil(async () => ((await inspector.children(dir)) ?? []).length === 2, 'the waiter queued');

    // Kill right after the server answered the holder (a ping's reply): its session was just
    // touched, so it lives a whole session timeout after the crash, as the worst case does.
    const seen = holder.lines.length;
    await holder.line(
      (line) => holder!.lines.indexOf(line) >= seen && parse(line).event === 'zk-socket',
      'a reply',
      15_000,
    );
    expect(await holder.kill()).toEqual({ code: null, signal: 'SIGKILL' });
    expect(await inspector.children(dir)).toContain(basename(held.path as string));

    expect(await outcome).toEqual({ node: expect.any(String) });
    const { node } = (await outcome) as { node: string };
    // In the body, ZooKeeper held the waiter's node alone: the dead session had ended.
    expect(nodesInBody).toEqual([node]);
    expect(await liveSessions(server.clientPort)).not.toContain(sessionIdOf(session.id as string));
  });
});
