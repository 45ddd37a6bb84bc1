import 'reflect-metadata';
import { Controller, Get, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';

import {
  FenceStoreError,
  LockAbortedError,
  LockClientClosedError,
  LockLostError,
  LockOrderError,
  LockReentryError,
  LockService,
  LockTimeoutError,
  LockUnavailableError,
  LockUpgradeError,
  StaleFencingTokenError,
  WithLock,
  ZkLockModule,
  type ZkLockError,
} from '../../lib/index';
import { rpcErrorOf, toHttpException } from '../../lib/nest/errors/lock-error-mapping';
import { CapturedLog } from '../support/captured-log';
import { uniqueRoot, zkConnect } from '../support/zk-test-env';

/**
 * What a caller may not read in an answer: the library's API (calls, options), the lock
 * service behind it, and the lock's own name (the service's naming of its resources).
 */
const INTERNALS =
  /contenders\(|status\(\)|timeoutMs|withLock|withLocks|acquireAll|AbortSignal|shutdownGraceMs|ZooKeeper|session|fencing|"x"|"b"|"a"|lock client|reentrant/i;

const errors: [ZkLockError, number][] = [
  [new LockTimeoutError('x', 'write', 0), 423],
  [new LockTimeoutError('x', 'write', 5000), 423],
  [new LockAbortedError('x'), 423],
  [new LockUpgradeError('x'), 409],
  [new LockReentryError('x'), 409],
  [new LockOrderError(['b'], ['a']), 409],
  [new LockLostError('x', 'its ZooKeeper session cannot be trusted any more'), 503],
  [new LockClientClosedError(), 503],
  [new LockUnavailableError('lock "x" (write)', 'disconnected', 1200, Date.now()), 503],
  [new LockUnavailableError('lock "x" (write)', 'lost', 1200, Date.now()), 503],
  [new StaleFencingTokenError('x', 5n, 7n), 409],
  [new FenceStoreError('zk_lock_fence', 'check the token of "x"', new Error('Client was closed')), 503],
];

describe('what HTTP and RPC callers are told of a lock error', () => {
  it.each(errors)('%p: a message for the caller, its code kept, nothing of the internals', (error, status) => {
    const http = toHttpException(error)!;
    const body = http.getResponse() as { statusCode: number; code: string; message: string };
    expect(body).toMatchObject({ statusCode: status, code: error.code });
    expect(body.message).not.toMatch(INTERNALS);
    expect(body.message).not.toBe(error.message);
    expect(body.message).toMatch(/\.$/);
    expect(rpcErrorOf(error)).toEqual({ status: 'error', code: error.code, message: body.message });
  });

  @Controller()
  class AnswersController {
    @Get('run')
    @WithLock('busy', { timeoutMs: 0 })
    async run(): Promise<string> {
      return 'ran';
    }

    @Get('lost')
    lost(): never {
      throw new LockLostError('sibling', 'session expired');
    }
  }

  describe('over HTTP', () => {
    let app: INestApplication;
    const log = new CapturedLog();
    beforeAll(async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [ZkLockModule.forRoot({ connectionString: zkConnect(), rootPath: uniqueRoot('caller-messages') })],
        controllers: [AnswersController],
      }).compile();
      app = moduleRef.createNestApplication({ logger: log });
      await app.init();
    });
    afterAll(() => app.close());

    it('423: the body says the resource is busy; the log has the full message, with the request', async () => {
      const holder = await app.get(LockService).acquire('busy');
      try {
        const from = log.lines.length;
        const reply = await request(app.getHttpServer()).get('/run').expect(423);
        expect(reply.body).toEqual({
          statusCode: 423,
          error: 'Locked',
          code: 'LOCK_TIMEOUT',
          message: expect.stringMatching(/busy/) as string,
        });
        expect(reply.body.message).not.toMatch(INTERNALS);
        const full = new LockTimeoutError('busy', 'write', 0).message;
        expect(log.lines.slice(from).map(([, line]) => line)).toEqual([
          expect.stringMatching(/^GET \/run answered 423 \(LOCK_TIMEOUT\): /),
        ]);
        expect(log.lines.slice(from)[0][1]).toContain(full);
      } finally {
        await holder.release();
      }
    });

    it('503: the body asks for a retry; the log keeps the why', async () => {
      const from = log.lines.length;
      const reply = await request(app.getHttpServer()).get('/lost').expect(503);
      expect(reply.body).toMatchObject({ code: 'LOCK_LOST' });
      expect(reply.body.message).not.toMatch(INTERNALS);
      expect(reply.body.message).not.toContain('session expired');
      expect(log.matching('warn', /^GET \/lost answered 503 \(LOCK_LOST\): /)).toEqual([
        expect.stringContaining(new LockLostError('sibling', 'session expired').message),
      ]);
      expect(log.lines.length).toBe(from + 1);
    });
  });
});
