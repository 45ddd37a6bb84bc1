import 'reflect-metadata';
import { Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { EventEmitter2, EventEmitterModule, OnEvent } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import { setTimeout as sleep } from 'node:timers/promises';

import {
  LockLostError,
  LockService,
  LockTimeoutError,
  ReentrantLocker,
  WithLock,
  ZkLockModule,
  type ZkLockHandle,
  type ZkLockModuleOptions,
} from '../../lib/index';
import { LockFixture, nodeOf } from '../support/lock-fixture';
import { waitUntil } from '../support/wait-until';
import { uniqueRoot, zkConnect } from '../support/zk-test-env';
import { lockNodes } from './nest-fixture';

/**
 * A lock is never released under work still running inside it: work the holder started
 * but did not await, and that entered the lock again, keeps it held until it ends; and at
 * shutdown running bodies are let finish (up to shutdownGraceMs) or told first.
 */

/** Who is inside the critical section right now, across every instance of the test. */
class Section {
  inside = 0;
  most = 0;
  readonly log: string[] = [];
  async run(who: string, ms: number): Promise<void> {
    this.most = Math.max(this.most, ++this.inside);
    this.log.push(`${who} in`);
    await sleep(ms);
    this.log.push(`${who} out`);
    this.inside--;
  }
}

describe('a lock outlives every hold taken under it', () => {
  let fx: LockFixture;
  beforeAll(async () => (fx = await LockFixture.create('held-until-done')));
  afterAll(() => fx.cleanup());

  it('core: detached work that re-entered keeps the lock until it ends; the other client gets it only then', async () => {
    const [a, b] = await fx.many(2);
    const locker = new ReentrantLocker(a, 10_000);
    const section = new Section();
    let detached!: Promise<void>;
    let outerReturned = false;
    const outer = locker
      .withLock('report', async () => {
        await section.run('outer', 20);
        // Not awaited: a fire-and-forget that enters the lock again.
        detached = locker.withLock('report', () => section.run('detached', 400));
      })
      .then(() => (outerReturned = true));
    await waitUntil(() => section.log.includes('outer out'), 'the outer body ends');
    const other = b.acquire('report', { timeoutMs: 10_000 }).then(async (lock) => {
      await section.run('other client', 10);
      return lock;
    });
    await sleep(150);
    // The holder returned, but its detached hold runs on: the node stays, nobody else is in.
    expect(outerReturned).toBe(false);
    expect(await fx.nodes('report')).toHaveLength(2);
    await detached;
    await outer;
    const lock = await other;
    expect(section.log).toEqual([
      'outer in',
      'outer out',
      'detached in',
      'detached out',
      'other client in',
      'other client out',
    ]);
    expect(section.most).toBe(1);
    await lock.release();
    expect(await fx.nodes('report')).toBeNull();
  });

  it('core: code run with runHolding(handle) after acquire() re-enters instead of waiting for itself', async () => {
    const [a] = await fx.many(1);
    const locker = new ReentrantLocker(a, 10_000);
    const lock = await locker.acquire('acquired');
    // acquire() alone cannot make the caller's later code the holder: it would wait for itself.
    await expect(locker.withLock('acquired', () => 'inside', { timeoutMs: 300 })).rejects.toBeInstanceOf(
      LockTimeoutError,
    );
    const inside = await locker.runHolding(lock, () =>
      locker.withLock('acquired', async (nested) => ({
        token: nested.fencingToken,
        nodes: await fx.nodes('acquired'),
      })),
    );
    expect(inside).toEqual({ token: lock.fencingToken, nodes: [nodeOf(lock as ZkLockHandle)] });
    expect(lock.released).toBe(false); // runHolding leaves the grant to its owner
    await lock.release();
    expect(await fx.nodes('acquired')).toBeNull();
  });

  it('core: once every hold is released, work started later takes the lock for itself', async () => {
    const [a] = await fx.many(1);
    const locker = new ReentrantLocker(a, 10_000);
    let later!: Promise<number>;
    await locker.withLock('later', async () => {
      later = sleep(50).then(() => locker.withLock('later', async () => (await fx.nodes('later'))!.length));
    });
    expect(await later).toBe(1); // its own node, queued after the grant ended
  });
});

const SECTION = new Section();

@Injectable()
class Producer {
  constructor(private readonly events: EventEmitter2) {}

  @WithLock('stock')
  async restock(): Promise<void> {
    await SECTION.run('producer', 20);
    this.events.emit('restocked'); // the handler runs on after this method returns
  }
}

@Injectable()
class Consumer {
  @OnEvent('restocked')
  @WithLock('stock')
  async onRestocked(): Promise<void> {
    await SECTION.run('event handler', 400);
  }
}

@Injectable()
class SlowJob {
  signal: AbortSignal | undefined;
  ended = false;
  constructor(private readonly locks: LockService) {}

  @WithLock('nightly')
  async run(ms: number): Promise<string> {
    this.signal = this.locks.held('nightly')!.signal;
    await sleep(ms);
    this.ended = true;
    return 'done';
  }
}

async function startContext(
  root: string,
  options: Partial<ZkLockModuleOptions> = {},
): Promise<INestApplicationContext> {
  @Module({
    imports: [
      EventEmitterModule.forRoot(),
      ZkLockModule.forRoot({ connectionString: zkConnect(), rootPath: root, emptyDirectoryGraceMs: 0, ...options }),
    ],
    providers: [Producer, Consumer, SlowJob],
  })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  moduleRef.useLogger(false);
  return moduleRef.init();
}

describe('Nest: held until done', () => {
  const root = uniqueRoot('nest-held');
  let a: INestApplicationContext;
  let b: INestApplicationContext;
  beforeEach(async () => {
    [a, b] = await Promise.all([startContext(root), startContext(root)]);
  });
  afterEach(async () => {
    await a.close();
    await b.close();
  });

  it('an @OnEvent handler with the same @WithLock, emitted inside, keeps the lock; the other instance waits for it', async () => {
    SECTION.log.length = 0;
    const produced = a.get(Producer).restock();
    await waitUntil(() => SECTION.log.includes('producer out'), 'the producer body ends');
    const other = b.get(LockService).withLock('stock', () => SECTION.run('other instance', 10));
    await produced; // resolves once the handler's hold is released too
    await other;
    expect(SECTION.log).toEqual([
      'producer in',
      'producer out',
      'event handler in',
      'event handler out',
      'other instance in',
      'other instance out',
    ]);
    expect(SECTION.most).toBe(1);
    expect(await lockNodes(b, 'stock')).toBeNull();
  });

  it('app.close() lets a running @WithLock method finish before the lock goes (default grace)', async () => {
    const job = a.get(SlowJob);
    const running = job.run(600);
    await waitUntil(async () => (await lockNodes(b, 'nightly'))?.length === 1, 'the job holds the lock');
    const closing = a.close();
    const other = b
      .get(LockService)
      .acquire('nightly', { timeoutMs: 10_000 })
      .then((lock) => ({ lock, jobEnded: job.ended }));
    expect(await running).toBe('done');
    await closing;
    const { lock, jobEnded } = await other;
    expect(jobEnded).toBe(true); // never granted while the job ran
    expect(job.signal!.aborted).toBe(false);
    await lock.release();
  });
});

describe('Nest: shutdown grace ran out', () => {
  it("aborts the running method's signal before releasing, and its caller gets the LockLostError", async () => {
    const root = uniqueRoot('nest-grace');
    const a = await startContext(root, { shutdownGraceMs: 100 });
    const b = await startContext(root);
    try {
      const job = a.get(SlowJob);
      const running = job.run(1200).catch((error: unknown) => error);
      await waitUntil(async () => (await lockNodes(b, 'nightly'))?.length === 1, 'the job holds the lock');
      let abortedAt = 0;
      job.signal!.addEventListener('abort', () => (abortedAt = performance.now()));
      const closedAt = a.close().then(() => performance.now());
      const lock = await b.get(LockService).acquire('nightly', { timeoutMs: 10_000 });
      const grantedAt = performance.now();
      expect(abortedAt).toBeGreaterThan(0);
      expect(abortedAt).toBeLessThanOrEqual(grantedAt);
      expect(job.signal!.reason).toBeInstanceOf(LockLostError);
      expect(job.ended).toBe(false); // released under it, but it was told
      const outcome = await running;
      expect(outcome).toBeInstanceOf(LockLostError);
      expect((outcome as Error).message).toMatch(/closing while this holder had not released it.*shutdownGraceMs/);
      await closedAt;
      await lock.release();
    } finally {
      await a.close();
      await b.close();
    }
  });
});
