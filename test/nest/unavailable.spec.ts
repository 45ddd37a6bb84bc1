import 'reflect-metadata';
import { Controller, Get, Injectable, type INestApplication } from '@nestjs/common';
import request from 'supertest';

import { LockService, LockUnavailableError, WithLock, ZK_LOCK_BACKEND, type ZkLockBackend } from '../../lib/index';
import { CapturedLog } from '../support/captured-log';
import type { TcpProxy } from '../support/tcp-proxy';
import { waitUntil } from '../support/wait-until';
import { uniqueRoot } from '../support/zk-test-env';
import { startAppBehindProxy } from './nest-fixture';

@Injectable()
class Jobs {
  readonly ran: string[] = [];

  @WithLock('now', { timeoutMs: 0 })
  async now(): Promise<string> {
    return 'ran';
  }

  @WithLock('later', { timeoutMs: 300 })
  async later(): Promise<string> {
    return 'ran';
  }

  @WithLock('tick', { ifLocked: 'skip' })
  async tick(): Promise<void> {
    this.ran.push('tick');
  }
}

@Controller()
class JobsController {
  constructor(private readonly jobs: Jobs) {}

  @Get('now')
  now(): Promise<string> {
    return this.jobs.now();
  }

  @Get('later')
  later(): Promise<string> {
    return this.jobs.later();
  }
}

/** ZooKeeper out of reach: 503 (not 423), skips resolve undefined and are said once per outage, reads end. */
describe('Nest while no ZooKeeper session is connected', () => {
  let proxy: TcpProxy;
  let app: INestApplication;
  const log = new CapturedLog();
  beforeAll(async () => {
    ({ app, proxy } = await startAppBehindProxy(
      { providers: [Jobs], controllers: [JobsController] },
      { rootPath: uniqueRoot('nest-unavailable'), acquireTimeoutMs: 300 },
      log,
    ));
  });
  afterAll(async () => {
    await app?.close();
    await proxy?.stop();
  });
  const backend = (): ZkLockBackend => app.get(ZK_LOCK_BACKEND);
  const skipWarnings = (): string[] => log.matching('warn', /^Skipping calls/);
  const cutOff = async (): Promise<void> => {
    await proxy.stop();
    await waitUntil(() => !backend().client.session.isConnected, 'the application is disconnected');
  };
  const restore = async (): Promise<void> => {
    await proxy.start();
    await waitUntil(() => backend().client.session.isConnected, 'the application reconnects');
  };

  it('answers 503 with LOCK_UNAVAILABLE for a try and for a wait whose deadline passed, never 423', async () => {
    await cutOff();
    for (const path of ['/now', '/later']) {
      const response = await request(app.getHttpServer()).get(path);
      expect(response.status).toBe(503);
      expect(response.body).toMatchObject({ statusCode: 503, error: 'Service Unavailable', code: 'LOCK_UNAVAILABLE' });
      expect(response.body.message).toMatch(/^The service cannot coordinate access/);
      expect(
        log.matching(
          'warn',
          /answered 503 \(LOCK_UNAVAILABLE\): No ZooKeeper session is connected.*disconnected for \d+ ms/,
        ),
      ).not.toEqual([]);
      expect(response.headers['retry-after']).toBe('5');
    }
    await restore();
    expect((await request(app.getHttpServer()).get('/now')).status).toBe(200);
  });

  it("reads wait the module's acquireTimeoutMs for a session, then reject with LockUnavailableError", async () => {
    const locks = app.get(LockService);
    await cutOff();
    await expect(locks.contenders('now')).rejects.toBeInstanceOf(LockUnavailableError);
    await expect(locks.locks()).rejects.toBeInstanceOf(LockUnavailableError);
    await expect(locks.requestRevocation('now', { timeoutMs: 0 })).rejects.toBeInstanceOf(LockUnavailableError);
    await restore();
    expect(await locks.contenders('now')).toEqual([]);
  });

  it("ifLocked: 'skip' resolves undefined without running, with one warning per outage, not per call", async () => {
    const jobs = app.get(Jobs);
    const before = skipWarnings().length;
    await cutOff();
    for (let tick = 0; tick < 5; tick++) expect(await jobs.tick()).toBeUndefined();
    expect(jobs.ran).toEqual([]);
    expect(skipWarnings()).toHaveLength(before + 1);
    expect(skipWarnings().at(-1)).toMatch(/first: lock "tick", disconnected for \d+ ms/);

    await restore();
    await jobs.tick();
    expect(jobs.ran).toEqual(['tick']);
    await cutOff(); // the next outage is said again, once
    for (let tick = 0; tick < 3; tick++) await jobs.tick();
    expect(skipWarnings()).toHaveLength(before + 2);
    await restore();
  });
});
