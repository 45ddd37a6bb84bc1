import 'reflect-metadata';
import {
  Controller,
  Inject,
  Injectable,
  Logger,
  Post,
  type INestApplication,
  type INestApplicationContext,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';

import {
  InMemoryLockBackend,
  InMemoryLockStore,
  InvalidOptionError,
  LeadershipService,
  LockService,
  WhenLeader,
  WithLock,
  ZK_LOCK_BACKEND,
  ZkLockModule,
  type ZkLockTestingOptions,
} from '../../lib/index';
import { waitUntil } from '../support/wait-until';
import { zkPort } from '../support/zk-test-env';

/**
 * `ZkLockModule.forTesting()`: an application's locks in its unit tests, without a
 * ZooKeeper. Everything here runs with jest's default timeouts in mind: no connect to wait for.
 */

@Injectable()
class Nightly {
  runs = 0;
  release: (() => void) | undefined;

  @WithLock('nightly', { ifLocked: 'skip' })
  async run(): Promise<string | undefined> {
    this.runs++;
    await new Promise<void>((resolve) => (this.release = resolve));
    return 'done';
  }

  @WhenLeader('reports')
  async report(): Promise<string | undefined> {
    return 'reported';
  }
}

@Controller('orders')
class Orders {
  constructor(
    private readonly locks: LockService,
    @Inject(ZK_LOCK_BACKEND) private readonly backend: InMemoryLockBackend,
  ) {}

  @Post()
  @WithLock('orders')
  async create(): Promise<{ token: string }> {
    const held = this.locks.held('orders')!;
    // The holder loses its lock in the middle of the work (a test control).
    this.backend.loseLock('orders');
    return { token: String(held.fencingToken) };
  }
}

const zkSockets = (): number =>
  (process as unknown as { _getActiveHandles(): Array<{ remotePort?: number }> })
    ._getActiveHandles()
    .filter((h) => h.remotePort === zkPort()).length;

async function context(options?: ZkLockTestingOptions): Promise<INestApplicationContext> {
  const moduleRef = await Test.createTestingModule({
    imports: [ZkLockModule.forTesting(options)],
    providers: [Nightly],
  }).compile();
  return moduleRef.init();
}

describe('ZkLockModule.forTesting', () => {
  it('starts at once with no connection; @WithLock, LockService and @WhenLeader work in one process', async () => {
    const sockets = zkSockets();
    const app = await context();
    try {
      expect(zkSockets()).toBe(sockets);
      expect(app.get(ZK_LOCK_BACKEND)).toBeInstanceOf(InMemoryLockBackend);
      const locks = app.get(LockService);
      await expect(locks.withLock('x', (handle) => handle.fencingToken)).resolves.toEqual(expect.any(BigInt));
      await expect(locks.releasesConfirmed()).resolves.toBeUndefined(); // nothing to wait for in memory
      // A lone instance leads its groups once bootstrapped.
      await waitUntil(() => app.get(LeadershipService).isLeader('reports'), 'the instance leads');
      await expect(app.get(Nightly).report()).resolves.toBe('reported');
      expect(await app.get(LeadershipService).leader('reports')).toMatch(/:memory-\d+$/);
    } finally {
      await app.close();
    }
  });

  it('applications sharing a store are instances of one service: a skip job runs on one of them, one leads', async () => {
    const store = new InMemoryLockStore();
    const [a, b] = await Promise.all([context({ store, identity: 'a' }), context({ store, identity: 'b' })]);
    try {
      const running = a.get(Nightly).run();
      await waitUntil(() => a.get(Nightly).runs === 1, 'a runs the job');
      await expect(b.get(Nightly).run()).resolves.toBeUndefined(); // skipped: a holds it
      expect(b.get(Nightly).runs).toBe(0);
      a.get(Nightly).release!();
      await expect(running).resolves.toBe('done');
      await waitUntil(() => [a, b].some((app) => app.get(LeadershipService).isLeader('reports')), 'one leads');
      const leaders = [a, b].filter((app) => app.get(LeadershipService).isLeader('reports'));
      expect(leaders).toHaveLength(1);
      const follower = leaders[0] === a ? b : a;
      await expect(follower.get(Nightly).report()).resolves.toBeUndefined();
      // The leader shuts down: the other leads at once.
      await leaders[0].close();
      await waitUntil(() => follower.get(LeadershipService).isLeader('reports'), 'the other instance leads');
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('a lock lost under a @WithLock handler: 503 instead of success, and a warning naming the lock', async () => {
    const backend = new InMemoryLockBackend();
    const moduleRef = await Test.createTestingModule({
      imports: [ZkLockModule.forTesting({ backend })],
      controllers: [Orders],
    }).compile();
    const app: INestApplication = moduleRef.createNestApplication({ logger: false });
    await app.init();
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      const response = await request(app.getHttpServer()).post('/orders').expect(503);
      expect(response.body).toMatchObject({ code: 'LOCK_LOST', message: expect.stringMatching(/^The request lost/) });
      // The lock's name and why it was lost are for the log, not the caller.
      expect(warn).toHaveBeenCalledWith(
        expect.stringMatching(/^POST \/orders answered 503 \(LOCK_LOST\): Lock "orders" was lost/),
      );
      expect(warn).toHaveBeenCalledWith(expect.stringMatching(/^Lock "orders" was lost \d+ ms after it was granted/));
    } finally {
      warn.mockRestore();
      await app.close();
    }
  });

  it('a LockService mock given with overrideProvider is what @WithLock uses in that module', async () => {
    const calls: Array<[string, unknown]> = [];
    const mock = {
      withLock: async (name: string, fn: () => unknown, options: unknown) => {
        calls.push([name, options]);
        return fn();
      },
    };
    const moduleRef = await Test.createTestingModule({ imports: [ZkLockModule.forTesting()], providers: [Nightly] })
      .overrideProvider(LockService)
      .useValue(mock)
      .compile();
    const app = await moduleRef.init();
    try {
      const nightly = app.get(Nightly);
      const running = nightly.run();
      await waitUntil(() => nightly.runs === 1, 'the job runs');
      nightly.release!();
      await expect(running).resolves.toBe('done');
      expect(calls).toEqual([['nightly', { ifLocked: 'skip' }]]);
    } finally {
      await app.close();
    }
  });

  it('LockService calls are prototype methods: jest.spyOn(LockService.prototype, …) and a subclass override both serve @WithLock', async () => {
    const spy = jest.spyOn(LockService.prototype, 'withLock');
    let app = await context();
    try {
      await expect(app.get(LockService).withLock('direct', () => 'ran')).resolves.toBe('ran');
      const nightly = app.get(Nightly);
      const running = nightly.run();
      await waitUntil(() => nightly.runs === 1, 'the job runs');
      nightly.release!();
      await expect(running).resolves.toBe('done');
      expect(spy.mock.calls.map(([name]) => name)).toEqual(['direct', 'nightly']);
    } finally {
      spy.mockRestore();
      await app.close();
    }

    const names: string[] = [];
    class CountingLockService extends LockService {
      override async acquire(...args: Parameters<LockService['acquire']>): ReturnType<LockService['acquire']> {
        names.push(`acquire:${args[0]}`);
        return super.acquire(...args);
      }
    }
    const moduleRef = await Test.createTestingModule({ imports: [ZkLockModule.forTesting()], providers: [Nightly] })
      .overrideProvider(LockService)
      .useClass(CountingLockService)
      .compile();
    app = await moduleRef.init();
    try {
      const handle = await app.get(LockService).acquire('counted');
      await handle.release();
      expect(names).toEqual(['acquire:counted']);
    } finally {
      await app.close();
    }
  });

  it('takes nodeFormat as forRoot does: node names in contenders(), and a reader in "curator-mutex" refused', async () => {
    const app = await context({ nodeFormat: 'curator-mutex' });
    try {
      const locks = app.get(LockService);
      await locks.withLock('billing', async () => {
        const [holder] = await locks.contenders('billing');
        expect(holder).toMatchObject({
          format: 'curator-mutex',
          node: expect.stringMatching(/^_c_[0-9a-f-]{36}-lock-\d{10}$/),
        });
      });
      await expect(locks.acquire('billing', { mode: 'read' })).rejects.toMatchObject({
        code: 'INVALID_OPTION',
        option: 'mode',
      });
    } finally {
      await app.close();
    }
  });

  it('takes release as forRoot does, so that shared options type-check; both modes release at once in memory', async () => {
    const shared = { acquireTimeoutMs: 500, release: 'confirmed' } as const;
    ZkLockModule.forRoot({ connectionString: '127.0.0.1:2181', ...shared }); // declared only: nothing connects
    for (const options of [
      shared,
      { ...shared, release: 'sent' as const },
      { backend: new InMemoryLockBackend(), ...shared },
    ]) {
      const app = await context(options);
      try {
        const locks = app.get(LockService);
        await locks.withLock('shared', () => undefined);
        expect(await locks.contenders('shared')).toEqual([]); // released as withLock resolved
        const lock = await locks.acquire('shared');
        await lock.release();
        await lock.releaseConfirmed;
      } finally {
        await app.close();
      }
    }
  });

  it('the backend it was given is closed at shutdown', async () => {
    const backend = new InMemoryLockBackend();
    const app = await context({ backend });
    await app.get(LockService).acquire('kept');
    await app.close();
    await expect(backend.acquire('after')).rejects.toMatchObject({ code: 'CLIENT_CLOSED' });
  });

  it.each([
    [{ acquireTimeoutMs: -1 }, 'acquireTimeoutMs'],
    [{ connectionString: '127.0.0.1:2181' }, 'connectionString'],
    [{ backend: {} }, 'backend'],
    [{ backend: new InMemoryLockBackend(), identity: 'x' }, 'identity'],
    [{ backend: new InMemoryLockBackend(), nodeFormat: 'curator-rw' }, 'nodeFormat'],
    [{ nodeFormat: 'curator' }, 'nodeFormat'],
    [{ release: 'later' }, 'release'],
  ])('bad options %p: InvalidOptionError naming %s, when the module is declared', (options, option) => {
    const error = (() => {
      try {
        ZkLockModule.forTesting(options as never);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect(error).toMatchObject({ option });
  });
});
