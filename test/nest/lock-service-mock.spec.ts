import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';

import {
  createLockServiceMock,
  InvalidOptionError,
  LockService,
  WhenLeader,
  WithLease,
  WithLock,
  ZkLockModule,
  ZkLockModuleMissingError,
  type LockServiceMock,
} from '../../lib/index';

/**
 * The usual Nest unit tests of a class with decorated methods, with no ZooKeeper: a
 * `LockService` mock provided beside the class, or given to its constructor. No server.
 */

@Injectable()
class Orders {
  readonly ran: string[] = [];

  constructor(readonly locks: LockService) {}

  @WithLock((id: string) => `order:${id}`, { ifLocked: 'skip' })
  async ship(id: string): Promise<string | undefined> {
    this.ran.push(`ship:${id}`);
    return `shipped ${id}`;
  }

  @WithLock((from: string, to: string) => [`account:${from}`, `account:${to}`])
  async move(from: string, to: string): Promise<string> {
    this.ran.push(`move:${from}:${to}`);
    return `${from}->${to}`;
  }

  @WithLease('partner', { maxLeases: 2 })
  async quote(): Promise<number> {
    this.ran.push('quote');
    return 7;
  }

  @WhenLeader('reports')
  async report(): Promise<string | undefined> {
    this.ran.push('report');
    return 'reported';
  }
}

/** The same, with no `LockService` of its own: only Nest can give it one. */
@Injectable()
class Reports {
  @WithLock('reports')
  async run(): Promise<string> {
    return 'ran';
  }
}

/** The calls a mock received, by method: [name or names, options]. */
function recorded(mock: LockServiceMock): Array<[string, unknown, unknown]> {
  const calls: Array<[string, unknown, unknown]> = [];
  for (const call of ['withLock', 'withLocks', 'withLease'] as const) {
    const original = mock[call];
    mock[call] = ((name: unknown, fn: () => unknown, options: unknown) => {
      calls.push([call, name, options]);
      return original(name as never, fn, options as never);
    }) as never;
  }
  return calls;
}

async function expectServedBy(orders: Orders, calls: Array<[string, unknown, unknown]>): Promise<void> {
  await expect(orders.ship('42')).resolves.toBe('shipped 42');
  await expect(orders.move('a', 'b')).resolves.toBe('a->b');
  await expect(orders.quote()).resolves.toBe(7);
  await expect(orders.report()).resolves.toBe('reported');
  expect(orders.ran).toEqual(['ship:42', 'move:a:b', 'quote', 'report']);
  expect(calls).toEqual([
    ['withLock', 'order:42', { ifLocked: 'skip' }],
    ['withLocks', ['account:a', 'account:b'], {}],
    ['withLease', 'partner', { maxLeases: 2 }],
  ]);
}

describe('a LockService mock', () => {
  it('provided beside the class, with no ZkLockModule, serves its decorated methods', async () => {
    const mock = createLockServiceMock();
    const calls = recorded(mock);
    const moduleRef = await Test.createTestingModule({
      providers: [Orders, Reports, { provide: LockService, useValue: mock }],
    }).compile();
    try {
      await expectServedBy(moduleRef.get(Orders), calls);
      // A class that does not inject LockService itself gets its module's as well.
      await expect(moduleRef.get(Reports).run()).resolves.toBe('ran');
      expect(calls.at(-1)).toEqual(['withLock', 'reports', {}]);
    } finally {
      await moduleRef.close();
    }
  });

  it('given to the constructor (new, no Nest) serves its decorated methods', async () => {
    const mock = createLockServiceMock();
    const calls = recorded(mock);
    await expectServedBy(new Orders(mock), calls);
  });

  it('with leading: false, @WhenLeader methods skip, as on an instance that does not lead', async () => {
    const orders = new Orders(createLockServiceMock({ leading: false }));
    await expect(orders.report()).resolves.toBeUndefined();
    await expect(orders.ship('1')).resolves.toBe('shipped 1');
    expect(orders.ran).toEqual(['ship:1']);
  });

  it('a mock of your own needs only what the decorators call; @WhenLeader methods then skip', async () => {
    const names: string[] = [];
    const own = {
      withLock: async (name: string, fn: () => unknown) => {
        names.push(name);
        return fn();
      },
    };
    const orders = new Orders(own as unknown as LockService);
    await expect(orders.ship('1')).resolves.toBe('shipped 1');
    await expect(orders.report()).resolves.toBeUndefined();
    expect(names).toEqual(['order:1']);
    expect(orders.ran).toEqual(['ship:1']);
  });

  it('is a LockService of its own: real handles, one name excluded within the mock, and it outlives a module', async () => {
    const mock = createLockServiceMock();
    expect(mock).toBeInstanceOf(LockService);
    const token = await mock.withLock('direct', (handle) => handle.fencingToken);
    expect(typeof token).toBe('bigint');
    // Two calls on one name through one mock: the second waits for the first, as in one instance.
    let open!: () => void;
    const first = mock.withLock('one', () => new Promise<void>((resolve) => (open = resolve)));
    await expect(mock.withLock('one', () => 'ran', { ifLocked: 'skip' })).resolves.toBeUndefined();
    open();
    await first;
    // Nest's shutdown hooks leave it usable: one mock serves test after test.
    for (let i = 0; i < 2; i++) {
      const moduleRef = await Test.createTestingModule({
        providers: [Orders, { provide: LockService, useValue: mock }],
      }).compile();
      await moduleRef.init();
      await expect(moduleRef.get(Orders).ship(String(i))).resolves.toBe(`shipped ${i}`);
      await moduleRef.close();
    }
    await expect(mock.withLock('after', () => 'ran')).resolves.toBe('ran');
    // Its decorator calls are its own functions, bound: detached or spied, they still serve.
    const { withLock } = mock;
    await expect(withLock('detached', () => 'ran')).resolves.toBe('ran');
    const orders = new Orders(mock);
    jest.spyOn(mock, 'withLock').mockResolvedValue(undefined); // a lock held elsewhere, under ifLocked: 'skip'
    await expect(orders.ship('9')).resolves.toBeUndefined();
    expect(orders.ran).toEqual([]);
  });

  it('refuses unknown or mistyped options', () => {
    expect(() => createLockServiceMock({ leeding: true } as never)).toThrow(/leeding/);
    expect(() => createLockServiceMock({ leading: 'yes' } as never)).toThrow(InvalidOptionError);
  });

  it('each module resolves its own: a mock in one feature module, ZkLockModule.forTesting() in the application', async () => {
    const mock = createLockServiceMock();
    const calls = recorded(mock);
    @Module({ providers: [Orders, Reports, { provide: LockService, useValue: mock }] })
    class MockedModule {}
    @Module({ imports: [ZkLockModule.forTesting(), MockedModule], providers: [Orders, Reports] })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    const app = await moduleRef.init();
    try {
      const mocked = app.select(MockedModule).get(Orders, { strict: true });
      const own = app.select(AppModule).get(Orders, { strict: true });
      expect(mocked.locks).toBe(mock);
      const real = own.locks;
      expect(real).toBeInstanceOf(LockService);
      const realCalls: unknown[] = [];
      const realWithLock = real.withLock.bind(real);
      real.withLock = ((name: string, fn: () => unknown, options: never) => {
        realCalls.push(name);
        return realWithLock(name, fn, options);
      }) as never;

      await expect(mocked.ship('1')).resolves.toBe('shipped 1');
      await expect(own.ship('2')).resolves.toBe('shipped 2');
      // The same class with no LockService field: what its module resolves, all the same.
      await expect(app.select(MockedModule).get(Reports, { strict: true }).run()).resolves.toBe('ran');
      await expect(app.select(AppModule).get(Reports, { strict: true }).run()).resolves.toBe('ran');
      expect(calls).toEqual([
        ['withLock', 'order:1', { ifLocked: 'skip' }],
        ['withLock', 'reports', {}],
      ]);
      expect(realCalls).toEqual(['order:2', 'reports']);
    } finally {
      await app.close();
    }
  });

  it('a real LockService held by an instance counts only while its application runs', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [ZkLockModule.forTesting()],
      providers: [Orders],
    }).compile();
    const app = await moduleRef.init();
    const orders = app.get(Orders);
    await expect(orders.ship('1')).resolves.toBe('shipped 1');
    await app.close();
    await expect(orders.ship('2')).rejects.toThrow(ZkLockModuleMissingError);
    expect(orders.ran).toEqual(['ship:1']);
  });

  describe('none found', () => {
    class Plain {
      @WithLock('plain')
      async run(): Promise<string> {
        return 'ran';
      }
    }

    it('the error names forTesting() and the mock patterns', async () => {
      const error = await new Plain().run().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ZkLockModuleMissingError);
      const { message } = error as Error;
      expect(message).toMatch(/^@WithLock on Plain\.run found no LockService/);
      expect(message).toContain('ZkLockModule.forTesting()');
      expect(message).toContain('{ provide: LockService, useValue: createLockServiceMock() }');
      expect(message).toContain('new MyService(createLockServiceMock())');
    });

    it('a Nest module with no LockService builds the class, and the call says what is missing', async () => {
      const moduleRef = await Test.createTestingModule({ providers: [Reports] }).compile();
      try {
        const error = await moduleRef
          .get(Reports)
          .run()
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ZkLockModuleMissingError);
        expect((error as Error).message).toContain('createLockServiceMock()');
      } finally {
        await moduleRef.close();
      }
    });

    it('two fields that look like a LockService: none is guessed', async () => {
      class TwoLocks {
        constructor(
          readonly a: LockServiceMock,
          readonly b: LockServiceMock,
        ) {}

        @WithLock('two')
        async run(): Promise<string> {
          return 'ran';
        }
      }
      const error = await new TwoLocks(createLockServiceMock(), createLockServiceMock()).run().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ZkLockModuleMissingError);
    });
  });
});
