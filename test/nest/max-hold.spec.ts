import 'reflect-metadata';
import { Controller, Get, Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';

import {
  InvalidOptionError,
  LockLostError,
  LockService,
  WithLease,
  WithLock,
  ZkLockBackend,
  ZkLockModule,
  type ZkLockModuleOptions,
} from '../../lib/index';
import { CapturedLog } from '../support/captured-log';
import { thrownBy } from '../support/thrown-by';
import { uniqueRoot, zkConnect } from '../support/zk-test-env';

const MAX_HOLD_MS = 300;

/** What the hanging methods wait for: the test lets them return once another client was granted. */
let unhang: () => void = () => undefined;
const hang = (): Promise<void> => new Promise<void>((resolve) => (unhang = resolve));

@Injectable()
class Reports {
  @WithLock('report', { maxHoldMs: MAX_HOLD_MS })
  async build(): Promise<string> {
    await hang();
    return 'built';
  }

  @WithLock(() => ['report:a', 'report:b'], { maxHoldMs: MAX_HOLD_MS })
  async buildBoth(): Promise<string> {
    await hang();
    return 'built';
  }

  @WithLease('export', { maxLeases: 1, maxHoldMs: MAX_HOLD_MS })
  async export(): Promise<string> {
    await hang();
    return 'exported';
  }
}

@Controller()
class ReportsController {
  constructor(private readonly reports: Reports) {}

  @Get('report')
  build(): Promise<string> {
    return this.reports.build();
  }
}

/** `@WithLock`/`@WithLease` and the module's `maxHoldMs` on ZooKeeper, as an application sees them. */
describe('maxHoldMs in Nest', () => {
  const rootPath = uniqueRoot('nest-max-hold');
  const log = new CapturedLog();
  let app: INestApplication;
  let other: ZkLockBackend;

  const start = async (options: Partial<ZkLockModuleOptions> = {}): Promise<INestApplication> => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ZkLockModule.forRoot({
          connectionString: zkConnect(),
          rootPath,
          emptyDirectoryGraceMs: 0,
          identity: 'nest-holder',
          ...options,
        }),
      ],
      providers: [Reports],
      controllers: [ReportsController],
    }).compile();
    const started = moduleRef.createNestApplication({ logger: log });
    await started.init();
    return started;
  };

  beforeAll(async () => {
    app = await start();
    other = await ZkLockBackend.connect({ connectionString: zkConnect(), rootPath, emptyDirectoryGraceMs: 0 });
  });
  afterEach(() => unhang()); // a failed test leaves no method hanging
  afterAll(async () => {
    await other.close();
    await app.close();
  });

  it('@WithLock on a method that hangs: another instance is granted after maxHoldMs, a warning names the lock and maxHoldMs, the request gets 503', async () => {
    const from = log.lines.length;
    const response = request(app.getHttpServer())
      .get('/report')
      .then((r) => r);
    await waitForHolder(other, 'report');
    const next = await other.acquire('report'); // granted only once maxHoldMs released the hung holder
    const warning = await log.next('warn', /Lock "report" was lost/, from);
    expect(warning).toContain(`nest-holder held it longer than maxHoldMs (${MAX_HOLD_MS} ms)`);
    unhang();
    const { status, body } = await response;
    expect(status).toBe(503);
    expect(body).toMatchObject({ code: 'LOCK_LOST', message: expect.stringMatching(/^The request lost/) });
    expect(await log.next('warn', /^GET \/report answered 503 \(LOCK_LOST\): /, from)).toContain('maxHoldMs');
    await next.release();
  });

  it('@WithLock on several names: the group goes to another instance after maxHoldMs, one warning names the locks, the holder and the time held', async () => {
    const from = log.lines.length;
    const call = app.get(Reports).buildBoth();
    const outcome = call.then(
      () => undefined,
      (e: unknown) => e,
    );
    await waitForHolder(other, 'report:b');
    const next = await other.acquireAll(['report:a', 'report:b']); // only maxHoldMs frees the group
    const warning = await log.next('warn', /Lock "report:a, report:b" was lost \d+ ms after it was granted/, from);
    expect(warning).toContain(`nest-holder held it longer than maxHoldMs (${MAX_HOLD_MS} ms)`);
    unhang();
    expect(await outcome).toBeInstanceOf(LockLostError);
    expect(log.lines.slice(from).filter(([, message]) => message.includes('was lost'))).toHaveLength(1);
    await next.release();
  });

  it('@WithLease: the same for a lease', async () => {
    const call = app.get(Reports).export();
    await waitForHolder(other, 'export', 'lease');
    const next = await other.acquireLease('export', { maxLeases: 1 });
    unhang();
    await expect(call).rejects.toBeInstanceOf(LockLostError);
    await next.release();
  });

  it("the module's maxHoldMs applies to LockService calls naming none; a call's own wins", async () => {
    const limited = await start({ maxHoldMs: MAX_HOLD_MS });
    try {
      const locks = limited.get(LockService);
      const hung = locks.withLock('nightly', hang);
      await waitForHolder(other, 'nightly');
      const next = await other.acquire('nightly');
      unhang();
      await expect(hung).rejects.toThrow(/maxHoldMs/);
      await next.release();
      const group = locks.withLocks(['nightly:a', 'nightly:b'], hang);
      await waitForHolder(other, 'nightly:b');
      const nextGroup = await other.acquireAll(['nightly:a', 'nightly:b']);
      unhang();
      await expect(group).rejects.toThrow(/maxHoldMs/);
      await nextGroup.release();
      const own = await locks.acquire('nightly', { maxHoldMs: 60_000 });
      await expect(other.acquire('nightly', { timeoutMs: MAX_HOLD_MS + 300 })).rejects.toMatchObject({
        code: 'LOCK_TIMEOUT',
      });
      await own.release();
    } finally {
      await limited.close();
    }
  });

  it.each([0, -1, 2.5, '300'])(
    'a module maxHoldMs of %p is refused with InvalidOptionError naming it',
    async (value) => {
      const modules = [
        () => ZkLockModule.forRoot({ connectionString: zkConnect(), maxHoldMs: value as number }),
        () => ZkLockModule.forTesting({ maxHoldMs: value as number }),
      ];
      for (const module of modules) {
        // forTesting checks at once; forRoot when the module's providers are made.
        const error = await (async () =>
          (await Test.createTestingModule({ imports: [module()] }).compile()).init())().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(InvalidOptionError);
        expect(error).toMatchObject({ option: 'maxHoldMs' });
      }
    },
  );

  it('a decorator maxHoldMs that is not a whole number of milliseconds >= 1 is refused where it is declared', () => {
    const declarations = [
      () => WithLock('x', { maxHoldMs: 0 }),
      () => WithLock('x', { maxHoldMs: 1.5 }),
      () => WithLease('x', { maxLeases: 1, maxHoldMs: -1 }),
    ];
    for (const declare of declarations) {
      const error = thrownBy(declare) as Error;
      expect(error.message).toContain('Invalid option maxHoldMs');
      expect(error.cause).toBeInstanceOf(InvalidOptionError);
    }
  });
});

/** Waits until `name` has a holder (of a lock, or a lease). */
async function waitForHolder(client: ZkLockBackend, name: string, kind: 'lock' | 'lease' = 'lock'): Promise<void> {
  for (;;) {
    const holders = kind === 'lock' ? await client.contenders(name) : await client.leaseContenders(name);
    if (holders.some((c) => c.holding)) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
