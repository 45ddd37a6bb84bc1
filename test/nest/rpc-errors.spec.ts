import 'reflect-metadata';
import { Catch, Controller, Module, UseFilters, type RpcExceptionFilter, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  ClientProxyFactory,
  MessagePattern,
  Transport,
  type ClientProxy,
  type MicroserviceOptions,
} from '@nestjs/microservices';
import { firstValueFrom, throwError, type Observable } from 'rxjs';

import { LockService, LockTimeoutError, WithLock, ZkLockModule, type ZkLockModuleOptions } from '../../lib/index';
import { CapturedLog } from '../support/captured-log';
import { freePort } from '../support/free-port';
import { uniqueRoot, zkConnect } from '../support/zk-test-env';

/** An application's own RPC filter for lock timeouts. */
@Catch(LockTimeoutError)
class TimeoutRpcFilter implements RpcExceptionFilter<LockTimeoutError> {
  catch(error: LockTimeoutError): Observable<never> {
    return throwError(() => ({ status: 'error', by: 'own filter', code: error.code }));
  }
}

@Controller()
class ReportsController {
  @MessagePattern('report')
  @WithLock('report', { timeoutMs: 0 })
  async report(): Promise<string> {
    return 'done';
  }

  @MessagePattern('report-filtered')
  @UseFilters(TimeoutRpcFilter)
  @WithLock('report', { timeoutMs: 0 })
  async reportFiltered(): Promise<string> {
    return 'done';
  }
}

const root = uniqueRoot('nest-rpc');

/** A real TCP microservice on a free loopback port, and a client of it. */
async function start(options: Partial<ZkLockModuleOptions> = {}, logger: CapturedLog | false = false) {
  @Module({
    imports: [ZkLockModule.forRoot({ connectionString: zkConnect(), rootPath: root, ...options })],
    controllers: [ReportsController],
  })
  class ReportsModule {}
  const port = await freePort();
  const app = await NestFactory.createMicroservice<MicroserviceOptions>(ReportsModule as Type, {
    transport: Transport.TCP,
    options: { host: '127.0.0.1', port },
    logger,
  });
  await app.listen();
  const client: ClientProxy = ClientProxyFactory.create({
    transport: Transport.TCP,
    options: { host: '127.0.0.1', port },
  });
  await client.connect();
  const ask = (pattern: string): Promise<unknown> =>
    firstValueFrom(client.send(pattern, {})).catch((error: unknown) => ({ rejected: error }));
  const close = async (): Promise<void> => {
    await client.close();
    await app.close();
  };
  return { app, ask, close };
}

describe('lock errors in RPC handlers (TCP microservice)', () => {
  it("reach the caller with their code and a message for it, unless the handler's own filter takes them; the log has the full message", async () => {
    const log = new CapturedLog();
    const { app, ask, close } = await start({}, log);
    try {
      await expect(ask('report')).resolves.toBe('done');
      const holder = await app.get(LockService).acquire('report');
      try {
        expect(await ask('report')).toEqual({
          rejected: {
            status: 'error',
            code: 'LOCK_TIMEOUT',
            message: 'The resource this request needs is busy with another request. Retry later.',
          },
        });
        expect(log.matching('debug', /^RPC report answered 423 \(LOCK_TIMEOUT\): /)).toEqual([
          `RPC report answered 423 (LOCK_TIMEOUT): ${new LockTimeoutError('report', 'write', 0).message}`,
        ]);
        expect(await ask('report-filtered')).toEqual({
          rejected: { status: 'error', by: 'own filter', code: 'LOCK_TIMEOUT' },
        });
      } finally {
        await holder.release();
      }
      await expect(ask('report')).resolves.toBe('done');
    } finally {
      await close();
    }
  });

  it("rpcErrors: false leaves Nest's default answer", async () => {
    const { app, ask, close } = await start({ rpcErrors: false });
    try {
      const holder = await app.get(LockService).acquire('report');
      try {
        expect(await ask('report')).toEqual({ rejected: { status: 'error', message: 'Internal server error' } });
      } finally {
        await holder.release();
      }
    } finally {
      await close();
    }
  });
});
