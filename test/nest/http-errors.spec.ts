import 'reflect-metadata';
import {
  Controller,
  ForbiddenException,
  Get,
  HttpException,
  Injectable,
  Module,
  type INestApplication,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import request from 'supertest';

import {
  httpStatusOf,
  LockAbortedError,
  LockClientClosedError,
  LockLostError,
  LockService,
  LockTimeoutError,
  LockOrderError,
  LockReentryError,
  LockUnavailableError,
  LockUpgradeError,
  WithLock,
  ZkLockModule,
  retryAfterOf,
  ZkOperationError,
} from '../../lib/index';
import { uniqueRoot, zkConnect } from '../support/zk-test-env';
import { startApp } from './nest-fixture';

@Injectable()
class Jobs {
  constructor(readonly locks: LockService) {}

  @WithLock('busy', { timeoutMs: 0 })
  async runNow(): Promise<string> {
    return 'ran';
  }

  async upgrade(): Promise<void> {
    await this.locks.withLock('doc', () => this.locks.withLock('doc', () => undefined), { mode: 'read' });
  }
}

@Controller()
class JobsController {
  constructor(private readonly jobs: Jobs) {}

  @Get('run')
  run(): Promise<string> {
    return this.jobs.runNow();
  }

  @Get('upgrade')
  upgrade(): Promise<void> {
    return this.jobs.upgrade();
  }

  @Get('fails')
  fails(): never {
    throw new Error('not a lock error');
  }

  @Get('fails-async')
  async failsAsync(): Promise<never> {
    throw new TypeError('not a lock error either');
  }

  @Get('zk-fails')
  zkFails(): never {
    throw new ZkOperationError('create', '/x', 'NO_AUTH'); // a library error, but no lock answer
  }

  @Get('http-fails')
  httpFails(): never {
    throw new ForbiddenException('not yours');
  }

  @Get('teapot')
  teapot(): never {
    throw new HttpException({ statusCode: 418, reason: 'short and stout', code: 'LOCK_TIMEOUT' }, 418);
  }

  @Get('lock-fails')
  lockFails(): never {
    throw new LockLostError('sibling', 'session expired');
  }
}

describe('lock errors in HTTP handlers and elsewhere', () => {
  it.each([
    [new LockTimeoutError('x', 'write', 5), 423, 1],
    [new LockAbortedError('x'), 423, 1],
    [new LockUpgradeError('x'), 409, undefined],
    [new LockReentryError('x'), 409, undefined],
    [new LockOrderError(['b'], ['a']), 409, undefined],
    [new LockLostError('x', 'session expired'), 503, 5],
    [new LockClientClosedError(), 503, 1],
    [new LockUnavailableError('lock "x" (write)', 'disconnected', 1200, Date.now()), 503, 5],
    [new ZkOperationError('create', '/x', 'NO_AUTH'), undefined, undefined],
    [new Error('other'), undefined, undefined],
  ])('maps %p to HTTP %p with Retry-After %p', (error, status, retryAfter) => {
    expect(httpStatusOf(error)).toBe(status);
    expect(retryAfterOf(error)).toBe(retryAfter);
  });

  const root = uniqueRoot('nest-http');

  describe('HTTP, with the default mapping', () => {
    let app: INestApplication;
    beforeAll(async () => (app = await startApp({ providers: [Jobs], controllers: [JobsController] }, {}, root)));
    afterAll(() => app.close());

    it('answers 423 Locked when the lock is taken, with the reason', async () => {
      const holder = await app.get(LockService).acquire('busy');
      try {
        const reply = await request(app.getHttpServer()).get('/run').expect(423);
        expect(reply.body).toMatchObject({ statusCode: 423, error: 'Locked', code: 'LOCK_TIMEOUT' });
        expect(reply.body.message).toMatch(/is busy with another request/);
        expect(reply.headers['retry-after']).toBe('1');
      } finally {
        await holder.release();
      }
      await request(app.getHttpServer()).get('/run').expect(200, 'ran');
    });

    it('answers 409 Conflict for a write inside a read of the same lock', async () => {
      const reply = await request(app.getHttpServer()).get('/upgrade').expect(409);
      expect(reply.body).toMatchObject({ statusCode: 409, error: 'Conflict', code: 'LOCK_UPGRADE' });
      expect(reply.headers['retry-after']).toBeUndefined(); // the same call fails the same way
    });

    it('leaves other errors alone, while mapping lock errors from the handler next door', async () => {
      const server = app.getHttpServer();
      // The mapping is on: a lock error thrown straight from a handler answers 503.
      const mapped = await request(server).get('/lock-fails');
      expect([mapped.status, mapped.body]).toEqual([
        503,
        {
          statusCode: 503,
          error: 'Service Unavailable',
          code: 'LOCK_LOST',
          message: expect.stringMatching(/^The request lost its exclusive hold on a resource/) as string,
        },
      ]);
      expect(mapped.headers['retry-after']).toBe('5');
      // Any other error gets exactly what Nest answers for it without the interceptor:
      // plain errors and non-lock library errors the default 500...
      for (const path of ['/fails', '/fails-async', '/zk-fails']) {
        const reply = await request(server).get(path);
        expect(reply.headers['retry-after']).toBeUndefined();
        expect([path, reply.status, reply.body]).toEqual([
          path,
          500,
          { statusCode: 500, message: 'Internal server error' },
        ]);
      }
      // ...and an HttpException its own status and body, untouched.
      const forbidden = await request(server).get('/http-fails');
      expect([forbidden.status, forbidden.body]).toEqual([
        403,
        { statusCode: 403, error: 'Forbidden', message: 'not yours' },
      ]);
      const teapot = await request(server).get('/teapot');
      expect([teapot.status, teapot.body]).toEqual([
        418,
        { statusCode: 418, reason: 'short and stout', code: 'LOCK_TIMEOUT' },
      ]);
    });
  });

  it('answers 500 when httpErrors is false', async () => {
    const app = await startApp({ providers: [Jobs], controllers: [JobsController] }, { httpErrors: false }, root);
    try {
      const holder = await app.get(LockService).acquire('busy');
      await request(app.getHttpServer()).get('/run').expect(500);
      await holder.release();
    } finally {
      await app.close();
    }
  });

  it('gives cron jobs and plain contexts the domain error', async () => {
    @Module({ imports: [ZkLockModule.forRoot({ connectionString: zkConnect(), rootPath: root })], providers: [Jobs] })
    class WorkerModule {}
    const context = await NestFactory.createApplicationContext(WorkerModule, { logger: false });
    try {
      const holder = await context.get(LockService).acquire('busy');
      await expect(context.get(Jobs).runNow()).rejects.toBeInstanceOf(LockTimeoutError);
      await expect(context.get(Jobs).upgrade()).rejects.toBeInstanceOf(LockUpgradeError);
      await holder.release();
    } finally {
      await context.close();
    }
  });
});
