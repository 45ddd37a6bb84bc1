import 'reflect-metadata';
import { Controller, Get, Injectable, Module, Scope, type INestApplication, type OnModuleInit } from '@nestjs/common';
import { LazyModuleLoader } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import request from 'supertest';

import { LockService, WithLock, ZkLockModule, ZkLockModuleMissingError } from '../../lib/index';
import { LockFixture } from '../support/lock-fixture';
import { uniqueRoot, zkConnect, zkPort } from '../support/zk-test-env';

/**
 * Decorated methods find the LockService of the application (and of the module) that owns
 * them, whatever their provider's scope, with several applications, or several
 * ZkLockModules, in one process, as e2e tests make them. A method reports whether its own
 * application's service holds the lock while it runs: reentrancy is per backend, so
 * `held()` of another application's service sees nothing.
 */

@Injectable()
class Singleton {
  constructor(private readonly locks: LockService) {}

  @WithLock('singleton')
  async run(): Promise<boolean> {
    return this.locks.held('singleton') !== undefined;
  }
}

@Injectable({ scope: Scope.TRANSIENT })
class Transient {
  constructor(private readonly locks: LockService) {}

  @WithLock('transient')
  async run(): Promise<boolean> {
    return this.locks.held('transient') !== undefined;
  }
}

@Injectable()
class UsesTransient {
  constructor(readonly transient: Transient) {}
}

class WithStatic {
  @WithLock('static')
  static async run(locks: LockService): Promise<boolean> {
    return locks.held('static') !== undefined;
  }
}

@Injectable({ scope: Scope.REQUEST })
class PerRequest {
  constructor(private readonly locks: LockService) {}

  @WithLock('request')
  async run(): Promise<boolean> {
    return this.locks.held('request') !== undefined;
  }
}

@Injectable()
class Lazy {
  constructor(private readonly locks: LockService) {}

  @WithLock('lazy')
  async run(): Promise<boolean> {
    return this.locks.held('lazy') !== undefined;
  }
}
@Module({ providers: [Lazy] })
class LazyModule {}

@Controller({ path: 'scoped', scope: Scope.REQUEST })
class ScopedController {
  constructor(
    private readonly locks: LockService,
    private readonly perRequest: PerRequest,
    private readonly lazyLoader: LazyModuleLoader,
  ) {}

  @Get('own')
  @WithLock('controller')
  async own(): Promise<boolean> {
    return this.locks.held('controller') !== undefined;
  }

  @Get('provider')
  async provider(): Promise<boolean> {
    return this.perRequest.run();
  }

  @Get('static')
  async static(): Promise<boolean> {
    return WithStatic.run(this.locks);
  }

  @Get('lazy')
  async lazy(): Promise<boolean> {
    const ref = await this.lazyLoader.load(() => LazyModule);
    return ref.get(Lazy).run();
  }
}

async function app(rootPath: string): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    // Global, so that the lazily loaded module can inject LockService too.
    imports: [
      ZkLockModule.forRoot({ connectionString: zkConnect(), rootPath, emptyDirectoryGraceMs: 0, isGlobal: true }),
    ],
    providers: [Singleton, Transient, UsesTransient, PerRequest],
    controllers: [ScopedController],
  }).compile();
  const nest = moduleRef.createNestApplication({ logger: false });
  return nest.init();
}

/** Sockets this process has open to the test server. */
const zkSockets = (): number =>
  (process as unknown as { _getActiveHandles(): Array<{ remotePort?: number }> })
    ._getActiveHandles()
    .filter((h) => h.remotePort === zkPort()).length;

describe('several applications in one process', () => {
  let a: INestApplication;
  let b: INestApplication;
  beforeAll(async () => {
    [a, b] = await Promise.all([app(uniqueRoot('apps-a')), app(uniqueRoot('apps-b'))]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  it.each([
    ['a singleton', (x: INestApplication) => x.get(Singleton).run()],
    ['a transient provider', (x: INestApplication) => x.get(UsesTransient).transient.run()],
  ])('%s resolves its own application', async (_, call) => {
    await expect(call(a)).resolves.toBe(true);
    await expect(call(b)).resolves.toBe(true);
  });

  it.each(['own', 'provider', 'static', 'lazy'])(
    'GET /scoped/%s: a request-scoped controller, its request-scoped provider, a static method and a lazy module resolve the application that serves the request',
    async (path) => {
      for (const x of [a, b]) {
        await request(x.getHttpServer()).get(`/scoped/${path}`).expect(200).expect('true');
      }
    },
  );

  it('a static method called from outside any application is refused with a message that says why', async () => {
    const error = await WithStatic.run(a.get(LockService)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ZkLockModuleMissingError);
    expect((error as Error).message).toMatch(/WithStatic\.run/);
  });
});

// Two ZkLockModules in one application, each imported by one feature module.
@Injectable()
class SecondService {
  constructor(readonly locks: LockService) {}

  @WithLock('shared')
  async inner(whileInside: () => Promise<void>): Promise<boolean> {
    await whileInside();
    return this.locks.held('shared') !== undefined;
  }
}

@Injectable()
class FirstService {
  constructor(
    readonly locks: LockService,
    private readonly second: SecondService,
  ) {}

  @WithLock('shared')
  async outer(whileInside: () => Promise<void>): Promise<[boolean, boolean]> {
    const mine = this.locks.held('shared') !== undefined;
    const theirs = await this.second.inner(whileInside);
    return [mine, theirs];
  }
}

describe('ZkLockModule.forRoot in two feature modules of one application', () => {
  const roots = [uniqueRoot('feature-one'), uniqueRoot('feature-two')];
  let fx: LockFixture;
  beforeAll(async () => (fx = await LockFixture.create('features')));
  afterAll(() => fx.cleanup());

  it("each provider takes its locks through its own module's service: holding `shared` in one does not enter the other's", async () => {
    @Module({
      imports: [ZkLockModule.forRoot({ connectionString: zkConnect(), rootPath: roots[1], emptyDirectoryGraceMs: 0 })],
      providers: [SecondService],
      exports: [SecondService],
    })
    class FeatureTwo {}
    @Module({
      imports: [
        ZkLockModule.forRoot({ connectionString: zkConnect(), rootPath: roots[0], emptyDirectoryGraceMs: 0 }),
        FeatureTwo,
      ],
      providers: [FirstService],
    })
    class FeatureOne {}
    const moduleRef = await Test.createTestingModule({ imports: [FeatureOne] }).compile();
    const nest = await moduleRef.init();
    try {
      const first = nest.get(FirstService);
      const second = nest.get(SecondService);
      expect(first.locks).not.toBe(second.locks);
      let nodes: Array<string[] | null> = [];
      const result = await first.outer(async () => {
        nodes = await Promise.all(roots.map((root) => fx.inspector.children(`${root}/shared`)));
      });
      expect(result).toEqual([true, true]);
      // The outer call's node is under the first root; the inner call made its own under the second.
      expect(nodes.map((n) => n?.length)).toEqual([1, 1]);
    } finally {
      await nest.close();
    }
    // The inner lock was taken and released: its directory is gone again.
    expect(await fx.inspector.children(`${roots[1]}/shared`)).toBeNull();
  });
});

describe('an application whose start fails', () => {
  @Injectable()
  class FailsOnInit implements OnModuleInit {
    onModuleInit(): void {
      throw new Error('a later onModuleInit failed');
    }
  }

  it.each([
    [
      'a provider factory throws',
      {
        provide: 'BROKEN',
        useFactory: () => {
          throw new Error('factory failed');
        },
      },
      /factory failed/,
    ],
    ['a later onModuleInit throws', FailsOnInit, /later onModuleInit failed/],
  ])(
    '%s: no connection is left open, and the next application is not confused with it',
    async (_, provider, message) => {
      const before = zkSockets();
      const failing = Test.createTestingModule({
        imports: [ZkLockModule.forRoot({ connectionString: zkConnect(), rootPath: uniqueRoot('failed-start') })],
        providers: [Singleton, provider as never],
      })
        .compile()
        .then((moduleRef) => moduleRef.init());
      await expect(failing).rejects.toThrow(message);
      await new Promise((resolve) => setTimeout(resolve, 300)); // time for a stray connection to be made
      expect(zkSockets()).toBe(before);
      // A plain object no application provides falls back on the one running application:
      // the failed one does not count.
      const next = await app(uniqueRoot('after-failed-start'));
      try {
        await expect(WithStatic.run(next.get(LockService))).resolves.toBe(true);
        await expect(next.get(Singleton).run()).resolves.toBe(true);
      } finally {
        await next.close();
      }
    },
  );
});
