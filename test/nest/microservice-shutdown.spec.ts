import 'reflect-metadata';
import { Controller, Module } from '@nestjs/common';
import { ClientProxyFactory, MessagePattern, Transport, type ClientProxy } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { firstValueFrom } from 'rxjs';
import { setTimeout as sleep } from 'node:timers/promises';

import { LockService, WithLock, ZkLockModule } from '../../lib/index';
import { freePort } from '../support/free-port';
import { waitUntil } from '../support/wait-until';
import { uniqueRoot, zkConnect } from '../support/zk-test-env';
import { ZkInspector } from '../support/zookeeper/zk-inspector';
import { shutdownWindow } from './nest-fixture';

const handled: { ended: boolean; signal?: AbortSignal } = { ended: false };

@Controller()
class JobsController {
  constructor(private readonly locks: LockService) {}

  @MessagePattern('run')
  @WithLock('tcp-job')
  async run(ms: number): Promise<string> {
    handled.signal = this.locks.held('tcp-job')!.signal;
    await sleep(ms);
    handled.ended = true;
    return 'done';
  }
}

/** The TCP microservice transport goes through the same shutdown hooks as HTTP. */
describe('TCP microservice shutdown', () => {
  it('a message handler still running keeps its lock until it ends; the other instance gets it only then', async () => {
    const root = uniqueRoot('nest-tcp');
    const port = await freePort();
    @Module({
      imports: [ZkLockModule.forRoot({ connectionString: zkConnect(), rootPath: root, emptyDirectoryGraceMs: 0 })],
      controllers: [JobsController],
    })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    const service = moduleRef.createNestMicroservice({
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port },
      logger: false,
    });
    await service.listen();
    const other = await Test.createTestingModule({
      imports: [ZkLockModule.forRoot({ connectionString: zkConnect(), rootPath: root, emptyDirectoryGraceMs: 0 })],
    }).compile();
    await other.init();
    const client: ClientProxy = ClientProxyFactory.create({
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port },
    });
    const inspector = await ZkInspector.connect(zkConnect());
    try {
      const reply = firstValueFrom(client.send<string>('run', 600)).catch((error: unknown) => error);
      await waitUntil(
        async () => (await inspector.children(`${root}/tcp-job`))?.length === 1,
        'the handler holds the lock',
      );
      const closing = service.close();
      const lock = await other.get(LockService).acquire('tcp-job', { timeoutMs: 10_000 });
      expect(handled.ended).toBe(true); // never granted while the handler ran
      expect(handled.signal!.aborted).toBe(false); // it finished inside the grace, untouched
      await closing;
      await reply;
      await lock.release();
    } finally {
      client.close();
      await inspector.close();
      await service.close();
      await other.close();
    }
  });

  it('a message that comes once shutdown began (a hybrid application) is refused at once, with the RPC error of a lock this instance cannot give', async () => {
    const root = uniqueRoot('nest-tcp');
    const port = await freePort();
    const window = shutdownWindow();
    @Module({
      imports: [
        window.module, // its shutdown hook runs after the lock module's: a window where messages still come
        ZkLockModule.forRoot({ connectionString: zkConnect(), rootPath: root, emptyDirectoryGraceMs: 0 }),
      ],
      controllers: [JobsController],
    })
    class AppModule {}
    // A hybrid application (HTTP and a TCP microservice): its close() runs the shutdown hooks
    // before it closes its servers, as SIGTERM with enableShutdownHooks() does for any application.
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    const service = moduleRef.createNestApplication({ logger: false });
    service.connectMicroservice(
      { transport: Transport.TCP, options: { host: '127.0.0.1', port } },
      { inheritAppConfig: true }, // the lock module's interceptors answer for it too
    );
    await service.startAllMicroservices();
    await service.init();
    const client: ClientProxy = ClientProxyFactory.create({
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port },
    });
    const inspector = await ZkInspector.connect(zkConnect());
    handled.ended = false;
    try {
      await expect(firstValueFrom(client.send<string>('run', 0))).resolves.toBe('done');
      handled.ended = false;
      const closing = service.close();
      await window.reached;
      const refused = await firstValueFrom(client.send<string>('run', 0)).catch((error: unknown) => error);
      expect(refused).toEqual({ status: 'error', code: 'CLIENT_CLOSED', message: expect.any(String) });
      expect(handled.ended).toBe(false); // the handler never ran
      expect((await inspector.children(`${root}/tcp-job`)) ?? []).toEqual([]);
      window.open();
      await closing;
    } finally {
      window.open();
      client.close();
      await inspector.close();
      await service.close();
    }
  });
});
