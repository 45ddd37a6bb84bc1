import 'reflect-metadata';
import {
  Controller,
  Get,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type INestApplication,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Agent, get, type IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

import { LockClientClosedError, LockService, WithLock, ZkLockModule } from '../../lib/index';
import { waitUntil } from '../support/wait-until';
import { uniqueRoot, zkConnect } from '../support/zk-test-env';
import { backendOf, lockNodes, shutdownWindow, startApp } from './nest-fixture';

@Injectable()
class Ticks {
  ran = 0;

  @WithLock('tick', { ifLocked: 'skip', timeoutMs: 60_000 })
  async skipping(): Promise<void> {
    this.ran++;
  }

  @WithLock('tick', { timeoutMs: 60_000 })
  async waiting(): Promise<void> {
    this.ran++;
  }
}

/** The work of `GET /commit`: it waits for `mayFinish`, then commits. */
const commitRoute = { mayFinish: Promise.resolve(), started: false, committed: false };

@Controller()
class ShutdownController {
  @Get('commit')
  @WithLock('route')
  async commit(): Promise<string> {
    commitRoute.started = true;
    await commitRoute.mayFinish;
    commitRoute.committed = true;
    return 'committed';
  }

  @Get('locked')
  @WithLock('route')
  async locked(): Promise<string> {
    return 'locked';
  }

  @Get('plain')
  plain(): string {
    return 'plain';
  }
}

/** A GET on a keep-alive connection: status, headers and body. */
function fetchKeepAlive(port: number, path: string, agent: Agent): Promise<IncomingMessage & { text: string }> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path, agent }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve(Object.assign(res, { text })));
    }).on('error', reject);
  });
}

/** The refusal of a call made once shutdown began. */
const REFUSED =
  /^Lock "[^"]+" was not acquired: this lock client is shutting down \(in Nest: the application is stopping\) and takes no new locks\./;

describe('application shutdown', () => {
  const root = uniqueRoot('nest-shutdown');

  it("while calls wait: an ifLocked 'skip' call resolves quietly, a waiting one fails saying the application is shutting down", async () => {
    const a: INestApplication = await startApp({ providers: [Ticks] }, {}, root);
    const b: INestApplication = await startApp({}, {}, root);
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      const held = await b.get(LockService).acquire('tick');
      const ticks = a.get(Ticks);
      const skipping = ticks.skipping();
      const waiting = ticks.waiting().catch((e: unknown) => e);
      await waitUntil(async () => (await lockNodes(b, 'tick'))?.length === 3, 'both calls queue behind B');
      await a.close();
      await expect(skipping).resolves.toBeUndefined();
      const error = await waiting;
      expect(error).toBeInstanceOf(LockClientClosedError);
      expect((error as Error).message).toMatch(
        /^Lock "tick" was not acquired: this lock client is shutting down \(in Nest: the application is stopping\)/,
      );
      expect(ticks.ran).toBe(0);
      expect(errors).not.toHaveBeenCalled();
      expect(await lockNodes(b, 'tick')).toHaveLength(1);
      await held.release();
    } finally {
      errors.mockRestore();
      await a.close();
      await b.close();
    }
  });

  it('hands held locks to other instances at once, fails waits, and closes the session', async () => {
    const a: INestApplication = await startApp({}, { sessionTimeoutMs: 20_000 }, root);
    const b: INestApplication = await startApp({}, {}, root);
    try {
      const locksA = a.get(LockService);
      await locksA.acquire('job'); // held by instance A, never released by hand
      const heldByB = await b.get(LockService).acquire('other-job-wait');
      const waitingInA = locksA.acquire('other-job-wait', { timeoutMs: 60_000 }).catch((e: unknown) => e);
      const bWaits = b.get(LockService).acquire('job', { timeoutMs: 60_000 });
      await waitUntil(async () => (await lockNodes(b, 'job'))?.length === 2, 'B queues behind A');
      await waitUntil(async () => (await lockNodes(b, 'other-job-wait'))?.length === 2, 'A queues behind B');

      await a.close();
      // A's node is gone the moment close() returns: not left to a session timeout.
      expect(await lockNodes(b, 'job')).toHaveLength(1);

      expect(await waitingInA).toBeInstanceOf(LockClientClosedError);
      const got = await bWaits; // handed on now, not after A's 20 s session timeout
      expect(await lockNodes(b, 'job')).toHaveLength(1);
      expect(backendOf(a).client.isClosed).toBe(true);
      expect(backendOf(a).client.session.isLost).toBe(true);
      await Promise.all([got.release(), heldByB.release()]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('once shutdown began, refuses every new lock call at once, creating no node; a running body still finishes, joining its own lock', async () => {
    const window = shutdownWindow();
    const a: INestApplication = await startApp({ providers: [Ticks], imports: [window.module] }, {}, root);
    const b: INestApplication = await startApp({}, {}, root);
    try {
      const locks = a.get(LockService);
      let letBodyFinish!: () => void;
      const bodyMayFinish = new Promise<void>((resolve) => (letBodyFinish = resolve));
      const body = locks.withLock('running', async (handle) => {
        await bodyMayFinish;
        // Reentrant: joins the grant this chain holds, no new node.
        const nested = await locks.withLock('running', () => 'nested');
        return { nested, aborted: handle.signal.aborted };
      });
      await waitUntil(async () => (await lockNodes(b, 'running'))?.length === 1, 'the body holds its lock');

      const closing = a.close();
      await window.reached;
      const ran: string[] = [];
      const calls: Array<[string, () => Promise<unknown>]> = [
        ['acquire', () => locks.acquire('new')],
        ['tryAcquire', () => locks.tryAcquire('new')],
        ['withLock', () => locks.withLock('new', () => ran.push('withLock'))],
        ['acquireAll', () => locks.acquireAll(['new', 'new-too'])],
        ['withLocks', () => locks.withLocks(['new', 'new-too'], () => ran.push('withLocks'))],
        ['acquireLease', () => locks.acquireLease('new-lease', { maxLeases: 2 })],
        ['withLease', () => locks.withLease('new-lease', () => ran.push('withLease'), { maxLeases: 2 })],
        ['@WithLock', () => a.get(Ticks).waiting()],
      ];
      for (const [call, make] of calls) {
        const error = await make().then(
          () => new Error(`${call} was granted`),
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(LockClientClosedError);
        expect([call, (error as Error).message]).toEqual([call, expect.stringMatching(REFUSED)]);
      }
      // Skipping calls skip, as they do for a taken lock.
      await expect(locks.withLock('new', () => ran.push('skip'), { ifLocked: 'skip' })).resolves.toBeUndefined();
      await expect(a.get(Ticks).skipping()).resolves.toBeUndefined();
      expect(ran).toEqual([]);
      expect(a.get(Ticks).ran).toBe(0);
      for (const name of ['new', 'new-too', 'new-lease', 'tick']) expect((await lockNodes(b, name)) ?? []).toEqual([]);

      letBodyFinish();
      await expect(body).resolves.toEqual({ nested: 'nested', aborted: false });
      window.open();
      await closing;
      expect((await lockNodes(b, 'running')) ?? []).toEqual([]);
    } finally {
      window.open();
      await a.close();
      await b.close();
    }
  });

  it('while shutting down, HTTP answers close their keep-alive connection; a refused lock is 503 with Retry-After', async () => {
    const window = shutdownWindow();
    const app: INestApplication = await startApp(
      { controllers: [ShutdownController], imports: [window.module] },
      {},
      root,
    );
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as { port: number };
    const agent = new Agent({ keepAlive: true });
    try {
      const before = await fetchKeepAlive(port, '/locked', agent);
      expect([before.statusCode, before.headers.connection, before.text]).toEqual([200, 'keep-alive', 'locked']);

      const closing = app.close();
      await window.reached;
      const refused = await fetchKeepAlive(port, '/locked', agent);
      expect(refused.statusCode).toBe(503);
      expect(refused.headers).toMatchObject({ 'retry-after': '1', connection: 'close' });
      expect(JSON.parse(refused.text)).toMatchObject({ statusCode: 503, code: 'CLIENT_CLOSED' });
      const plain = await fetchKeepAlive(port, '/plain', agent);
      expect([plain.statusCode, plain.headers.connection, plain.text]).toEqual([200, 'close', 'plain']);
      window.open();
      await closing;
    } finally {
      window.open();
      agent.destroy();
      await app.close();
    }
  });

  it('counts shutdownGraceMs from the moment shutdown began, not from when the servers closed', async () => {
    const graceMs = 2000;
    const events: Array<{ what: string; at: number }> = [];
    @Injectable()
    class SlowToClose implements OnApplicationShutdown {
      // The application module's hook: Nest runs it before the lock module's, and it outlasts the grace.
      async onApplicationShutdown(): Promise<void> {
        await sleep(graceMs + 500);
        events.push({ what: 'slow hook ended', at: performance.now() });
      }
    }
    const app: INestApplication = await startApp({ providers: [SlowToClose] }, { shutdownGraceMs: graceMs }, root);
    const body = app.get(LockService).withLock('long', async (handle) => {
      // Works on until told to stop (a body that watches its signal).
      await new Promise<void>((resolve) => handle.signal.addEventListener('abort', () => resolve(), { once: true }));
      events.push({ what: 'body aborted', at: performance.now() });
    });
    void body.catch(() => undefined);
    await waitUntil(async () => (await lockNodes(app, 'long'))?.length === 1, 'the body holds its lock');
    await app.close();
    // The grace had run out by the time the lock module's turn came: the body is stopped at
    // once, not given the whole grace again.
    expect(events.map((e) => e.what)).toEqual(['slow hook ended', 'body aborted']);
    expect(events[1].at - events[0].at).toBeLessThan(graceMs);
  });

  it("runs the application module's beforeApplicationShutdown first: a readiness delay there still gets locks", async () => {
    const seen: Array<{ shuttingDown: boolean; ran: string | undefined }> = [];
    @Injectable()
    class ReadinessDelay implements BeforeApplicationShutdown {
      constructor(private readonly locks: LockService) {}

      async beforeApplicationShutdown(): Promise<void> {
        // Readiness would answer 503 from here; the instance still serves while the load balancer notices.
        const ran = await this.locks.withLock('during-delay', () => 'granted');
        seen.push({ shuttingDown: this.locks.shuttingDown, ran });
      }
    }
    const app: INestApplication = await startApp({ providers: [ReadinessDelay] }, {}, root);
    await app.close();
    expect(seen).toEqual([{ shuttingDown: false, ran: 'granted' }]);
    expect(app.get(LockService).shuttingDown).toBe(true);
  });

  it('forceCloseConnections: true drops the answer of a request whose guarded work still commits', async () => {
    let finish!: () => void;
    Object.assign(commitRoute, {
      mayFinish: new Promise<void>((resolve) => (finish = resolve)),
      started: false,
      committed: false,
    });
    const moduleRef = await Test.createTestingModule({
      imports: [ZkLockModule.forRoot({ connectionString: zkConnect(), rootPath: root, emptyDirectoryGraceMs: 0 })],
      controllers: [ShutdownController],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false, forceCloseConnections: true });
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as { port: number };
    const agent = new Agent({ keepAlive: true });
    try {
      const answer = fetchKeepAlive(port, '/commit', agent).then(
        (res) => `answered ${res.statusCode}`,
        (error: NodeJS.ErrnoException) => error.code ?? error.message,
      );
      await waitUntil(() => commitRoute.started, 'the request runs under its lock');
      const closing = app.close();
      // Nest destroys the socket when it closes the server; the lock module lets the body finish meanwhile.
      expect(await answer).toBe('ECONNRESET');
      finish();
      await closing;
      expect(commitRoute.committed).toBe(true); // the work was done, and its caller was told nothing
    } finally {
      finish();
      agent.destroy();
      await app.close();
    }
  });
});
