import 'reflect-metadata';
import {
  Catch,
  Controller,
  Get,
  HttpException,
  Injectable,
  UseFilters,
  type ArgumentsHost,
  type ExceptionFilter,
  type INestApplication,
} from '@nestjs/common';
import { APP_FILTER, BaseExceptionFilter } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import type { Response } from 'express';
import request from 'supertest';

import { LockService, LockTimeoutError, WithLock, ZkLockError, ZkLockModule } from '../../lib/index';
import { uniqueRoot, zkConnect } from '../support/zk-test-env';

/** Answers a lock timeout its own way, naming who answered. */
function timeoutFilter(by: string): new () => ExceptionFilter {
  @Catch(LockTimeoutError)
  class TimeoutFilter implements ExceptionFilter {
    catch(error: LockTimeoutError, host: ArgumentsHost): void {
      host.switchToHttp().getResponse<Response>().status(429).json({ by, code: error.code });
    }
  }
  return TimeoutFilter;
}
const MethodFilter = timeoutFilter('method');
const ClassFilter = timeoutFilter('controller');

/** A parent class in @Catch counts too. */
@Catch(ZkLockError)
class AnyLockErrorFilter implements ExceptionFilter {
  catch(error: ZkLockError, host: ArgumentsHost): void {
    host.switchToHttp().getResponse<Response>().status(429).json({ by: 'parent class', code: error.code });
  }
}

/** A catch-all filter, as many applications have: it sees what Nest's own handler would. */
const seenByCatchAll: unknown[] = [];
@Catch()
class CatchAll extends BaseExceptionFilter {
  override catch(error: unknown, host: ArgumentsHost): void {
    seenByCatchAll.push(error);
    super.catch(error, host);
  }
}

@Injectable()
class Busy {
  @WithLock('busy', { timeoutMs: 0 })
  async run(): Promise<string> {
    return 'ran';
  }
}

@Controller('plain')
class PlainController {
  constructor(private readonly busy: Busy) {}
  @Get()
  run(): Promise<string> {
    return this.busy.run();
  }
  @Get('method')
  @UseFilters(MethodFilter)
  method(): Promise<string> {
    return this.busy.run();
  }
}

@Controller('filtered')
@UseFilters(ClassFilter)
class FilteredController {
  constructor(private readonly busy: Busy) {}
  @Get()
  run(): Promise<string> {
    return this.busy.run();
  }
}

const root = uniqueRoot('nest-filters');

async function appWith(setup: {
  providers?: readonly unknown[];
  global?: readonly ExceptionFilter[];
}): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [ZkLockModule.forRoot({ connectionString: zkConnect(), rootPath: root, emptyDirectoryGraceMs: 0 })],
    providers: [Busy, ...((setup.providers ?? []) as never[])],
    controllers: [PlainController, FilteredController],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  if (setup.global) app.useGlobalFilters(...setup.global);
  await app.init();
  return app;
}

/** Runs `check` while another holder has the lock `busy`. */
async function whileBusy(app: INestApplication, check: () => Promise<void>): Promise<void> {
  const holder = await app.get(LockService).acquire('busy');
  try {
    await check();
  } finally {
    await holder.release();
  }
}

describe("lock errors and the application's own exception filters", () => {
  it('a filter on the handler or on its controller gets the lock error itself; elsewhere the 423 stands', async () => {
    const app = await appWith({});
    try {
      await whileBusy(app, async () => {
        const server = app.getHttpServer();
        await request(server).get('/plain/method').expect(429, { by: 'method', code: 'LOCK_TIMEOUT' });
        await request(server).get('/filtered').expect(429, { by: 'controller', code: 'LOCK_TIMEOUT' });
        const mapped = await request(server).get('/plain').expect(423);
        expect(mapped.body).toMatchObject({ statusCode: 423, error: 'Locked', code: 'LOCK_TIMEOUT' });
      });
    } finally {
      await app.close();
    }
  });

  it('a global filter wins too: app.useGlobalFilters, or APP_FILTER in the application module', async () => {
    for (const [by, setup] of [
      ['useGlobalFilters', { global: [new (timeoutFilter('useGlobalFilters'))()] }],
      ['APP_FILTER', { providers: [{ provide: APP_FILTER, useClass: timeoutFilter('APP_FILTER') }] }],
      ['parent class', { providers: [{ provide: APP_FILTER, useClass: AnyLockErrorFilter }] }],
    ] as const) {
      const app = await appWith(setup);
      try {
        await whileBusy(app, async () => {
          await request(app.getHttpServer()).get('/plain').expect(429, { by, code: 'LOCK_TIMEOUT' });
        });
        // The method and controller filters still come first.
        await whileBusy(app, async () => {
          await request(app.getHttpServer()).get('/plain/method').expect(429, { by: 'method', code: 'LOCK_TIMEOUT' });
        });
      } finally {
        await app.close();
      }
    }
  });

  it('a catch-all filter sees the HttpException Nest would, and answers 423 through BaseExceptionFilter', async () => {
    seenByCatchAll.length = 0;
    const app = await appWith({ providers: [{ provide: APP_FILTER, useClass: CatchAll }] });
    try {
      await whileBusy(app, async () => {
        const reply = await request(app.getHttpServer()).get('/plain').expect(423);
        expect(reply.body).toMatchObject({ statusCode: 423, code: 'LOCK_TIMEOUT' });
      });
      expect(seenByCatchAll).toHaveLength(1);
      expect(seenByCatchAll[0]).toBeInstanceOf(HttpException);
      expect((seenByCatchAll[0] as HttpException).cause).toBeInstanceOf(LockTimeoutError);
    } finally {
      await app.close();
    }
  });
});
