import 'reflect-metadata';
import { Controller, Get, Module, type INestApplication, type Type } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import request from 'supertest';

import { ZkLockModule } from '../../lib/index';
import { ZkLockHealthIndicator } from '../../lib/terminus';
import { filesLoadedByMainEntry } from '../support/main-entry-loads';
import { TcpProxy } from '../support/tcp-proxy';
import { waitUntil } from '../support/wait-until';
import { uniqueRoot, zkConnect, zkPort } from '../support/zk-test-env';
import { shutdownWindow } from './nest-fixture';

@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly zk: ZkLockHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.zk.isHealthy('zookeeper')]);
  }
}

/** `before`: modules imported before the lock module (see `shutdownWindow`). */
const healthModule = (lockModule: ReturnType<typeof ZkLockModule.forRoot>, before: Type[] = []) => {
  @Module({
    imports: [TerminusModule.forRoot({ logger: false }), ...before, lockModule],
    providers: [ZkLockHealthIndicator],
    controllers: [HealthController],
  })
  class HealthModule {}
  return HealthModule;
};

/** `nestjs-zk-lock/terminus` with the real @nestjs/terminus 11: up while the session is connected and trusted, down otherwise. */
describe('ZkLockHealthIndicator', () => {
  let proxy: TcpProxy;
  let app: INestApplication;
  beforeAll(async () => {
    proxy = new TcpProxy(zkPort());
    await proxy.start();
    const moduleRef = await Test.createTestingModule({
      imports: [
        healthModule(
          ZkLockModule.forRoot({
            connectionString: proxy.connectionString,
            rootPath: uniqueRoot('health'),
            sessionTimeoutMs: 4000,
          }),
        ),
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });
  afterAll(async () => {
    await app?.close();
    await proxy?.stop();
  });

  const health = () => request(app.getHttpServer()).get('/health');

  it('is up while connected, with the session id, server, timeout and how recent the last proof is', async () => {
    const response = await health();
    expect(response.status).toBe(200);
    expect(response.body.info.zookeeper).toEqual({
      status: 'up',
      state: 'connected',
      sessionId: expect.stringMatching(/^0x[0-9a-f]{16}$/),
      server: `127.0.0.1:${proxy.connectionString.split(':')[1]}`,
      provenAgoMs: expect.any(Number),
      timeoutMs: 4000,
    });
    expect(response.body.info.zookeeper.provenAgoMs).toBeLessThan(4000);
  });

  it('is down (503) while the server is silent and the session at risk, and up again once it answers', async () => {
    proxy.blackhole();
    await waitUntil(async () => (await health()).status === 503, 'the health check reports down');
    const down = await health();
    expect(down.body.error.zookeeper).toMatchObject({ status: 'down' });
    expect(['disconnected', 'at-risk']).toContain(down.body.error.zookeeper.state);
    proxy.heal();
    await waitUntil(async () => (await health()).status === 200, 'the health check reports up again');
  });

  it('is up in unit tests over forTesting (the in-memory backend)', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [healthModule(ZkLockModule.forTesting())] }).compile();
    const testApp = moduleRef.createNestApplication({ logger: false });
    await testApp.init();
    try {
      const response = await request(testApp.getHttpServer()).get('/health');
      expect(response.body.info.zookeeper).toEqual({ status: 'up', state: 'connected' });
    } finally {
      await testApp.close();
    }
  });

  it('the main entry point loads nothing of @nestjs/terminus (an optional peer)', () => {
    expect(filesLoadedByMainEntry(/@nestjs[\\/]terminus/)).toEqual([]);
  });

  it('is down (503) from the moment the application began to shut down, while the session is still connected', async () => {
    const window = shutdownWindow();
    const moduleRef = await Test.createTestingModule({
      imports: [
        healthModule(ZkLockModule.forRoot({ connectionString: zkConnect(), rootPath: uniqueRoot('health') }), [
          window.module,
        ]),
      ],
    }).compile();
    const closing = moduleRef.createNestApplication({ logger: false });
    await closing.init();
    const server = closing.getHttpServer();
    try {
      expect((await request(server).get('/health')).status).toBe(200);
      const closed = closing.close();
      await window.reached;
      const response = await request(server).get('/health');
      expect(response.status).toBe(503);
      expect(response.body.error.zookeeper).toMatchObject({ status: 'down', state: 'connected', shuttingDown: true });
      window.open();
      await closed;
    } finally {
      window.open();
      await closing.close();
    }
  });
});
