import 'reflect-metadata';
import {
  CanActivate,
  Controller,
  Get,
  Injectable,
  Param,
  ParseIntPipe,
  Post,
  StreamableFile,
  UseGuards,
  UsePipes,
  type PipeTransform,
  type INestApplication,
} from '@nestjs/common';
import { GUARDS_METADATA, METHOD_METADATA, PATH_METADATA, PIPES_METADATA } from '@nestjs/common/constants';
import { ApiOperation } from '@nestjs/swagger';
import { Readable } from 'node:stream';
import { of } from 'rxjs';
import request from 'supertest';

import {
  InvalidLockNameError,
  LockService,
  WhenLeader,
  WithLock,
  WithLockUsageError,
  ZkLockModuleMissingError,
} from '../../lib/index';
import { backendOf, lockNodes, startApp } from './nest-fixture';

@Injectable()
class PassThroughPipe implements PipeTransform {
  transform(value: unknown): unknown {
    return value;
  }
}

// @nestjs/swagger's metadata key for @ApiOperation (its constants are not exported).
const SWAGGER_API_OPERATION = 'swagger/apiOperation';

@Injectable()
class AllowAll implements CanActivate {
  canActivate(): boolean {
    return true;
  }
}

// The same route decorators, written above and below @WithLock.
@Controller('orders')
class OrdersController {
  constructor(readonly locks: LockService) {}
  readonly label = 'orders-controller';

  @Get(':id')
  @UseGuards(AllowAll)
  @UsePipes(PassThroughPipe)
  @ApiOperation({ summary: 'read an order' })
  @WithLock((id: number) => `order:${id}`, { mode: 'read' })
  async read(@Param('id', ParseIntPipe) id: number): Promise<{ id: number; self: string; token: string | undefined }> {
    return { id, self: this.label, token: this.locks.held(`order:${id}`)?.fencingToken.toString() };
  }

  @WithLock((id: number) => `order:${id}`)
  @Post(':id/pay')
  @UseGuards(AllowAll)
  @UsePipes(PassThroughPipe)
  @ApiOperation({ summary: 'pay an order' })
  async pay(@Param('id', ParseIntPipe) id: number): Promise<{ paid: number; typeOfId: string }> {
    return { paid: id, typeOfId: typeof id };
  }
}

describe('@WithLock', () => {
  it.each(['read', 'pay'] as const)(
    'keeps the metadata of other decorators, whichever side they are on (%s)',
    (method) => {
      const fn = OrdersController.prototype[method];
      expect(fn.name).toBe(method);
      expect(Reflect.getMetadata(PATH_METADATA, fn)).toBe(method === 'read' ? ':id' : ':id/pay');
      expect(Reflect.getMetadata(METHOD_METADATA, fn)).toBe(method === 'read' ? 0 : 1); // RequestMethod.GET / POST
      expect(Reflect.getMetadata(GUARDS_METADATA, fn)).toEqual([AllowAll]);
      expect(Reflect.getMetadata(PIPES_METADATA, fn)).toEqual([PassThroughPipe]);
      expect(Reflect.getMetadata(SWAGGER_API_OPERATION, fn)).toMatchObject({
        summary: method === 'read' ? 'read an order' : 'pay an order',
      });
    },
  );

  describe('in an application', () => {
    let app: INestApplication;
    beforeAll(
      async () => (app = await startApp({ controllers: [OrdersController], providers: [AllowAll, PassThroughPipe] })),
    );
    afterAll(() => app.close());

    it('decorated routes still route, with pipes applied and `this` kept, holding the lock', async () => {
      const read = await request(app.getHttpServer()).get('/orders/7').expect(200);
      expect(read.body).toMatchObject({ id: 7, self: 'orders-controller' });
      expect(BigInt(read.body.token)).toBeGreaterThan(0n);
      const pay = await request(app.getHttpServer()).post('/orders/8/pay').expect(201);
      expect(pay.body).toEqual({ paid: 8, typeOfId: 'number' });
      expect(backendOf(app).client.counter.snapshot().create).toBeGreaterThanOrEqual(2);
      expect(await lockNodes(app, 'order:8')).toBeNull(); // released, directory removed
    });

    it('keeps the method callable directly, as the async method it is', async () => {
      await expect(app.get(OrdersController).read(3)).resolves.toMatchObject({ id: 3 });
    });
  });

  it('refuses to decorate something that is not a method', () => {
    expect(() => {
      class Bad {
        // @ts-expect-error: a property decorator use, on purpose
        @WithLock('x') value = 1;
      }
      return Bad;
    }).toThrow(WithLockUsageError);
    expect(() => {
      class BadAccessor {
        // @ts-expect-error: an accessor, on purpose (the compiler refuses it; plain JS gets our message)
        @WithLock('x')
        get value(): number {
          return 1;
        }
      }
      return BadAccessor;
    }).toThrow(/can only decorate a method/);
  });

  it('refuses a generator method when the class is defined: its body would run unlocked, after the call', () => {
    expect(() => {
      class Rows {
        // @ts-expect-error: the compiler refuses it too; code compiled without type checks gets this message
        @WithLock('rows')
        async *all(): AsyncGenerator<number> {
          yield 1;
        }
      }
      return Rows;
    }).toThrow(/@WithLock cannot cover Rows\.all: it is a generator/);
  });

  it('refuses an empty name or bad options when the class is defined', () => {
    expect(() => WithLock('')).toThrow(WithLockUsageError);
    expect(() => WithLock(42 as never)).toThrow(/lock name/);
    expect(() => WithLock('x', { mode: 'exclusive' as never })).toThrow(/mode/);
    expect(() => WithLock('x', { timeoutMs: -1 })).toThrow(/timeoutMs/);
    expect(() => WithLock('x', { ifLocked: 'later' as never })).toThrow(
      /^@WithLock: Invalid option ifLocked="later": expected "wait", "skip" or "throw"/,
    );
    expect(() => WithLock('x', { holdAtLeastMs: -5 })).toThrow(/holdAtLeastMs=-5/);
    expect(() => WithLock('x', { holdAtLeastMs: 'long' as never })).toThrow(/holdAtLeastMs="long"/);
    expect(() => WithLock('x', { onLockLost: 'retry' as never })).toThrow(/onLockLost="retry"/);
    for (const bad of [{ ifLocked: 'later' }, { holdAtLeastMs: -5 }, { onLockLost: 'retry' }]) {
      expect(() => WithLock('x', bad as never)).toThrow(WithLockUsageError);
    }
  });

  describe('key functions and a missing module', () => {
    class Plain {
      @WithLock((id: unknown) => {
        if (id === 'boom') throw new Error('no key for boom');
        return id as string;
      })
      async run(_id: unknown): Promise<string> {
        return 'ran';
      }
    }

    it('says what to do when no ZkLockModule runs', async () => {
      const error = await new Plain().run('a').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ZkLockModuleMissingError);
      expect((error as Error).message).toMatch(/^@WithLock on Plain\.run.*Import ZkLockModule\.forRoot/s);
      class Job {
        @WhenLeader('jobs')
        static async run(): Promise<void> {}
      }
      const leaderError = await Job.run().catch((e: unknown) => e);
      expect(leaderError).toBeInstanceOf(ZkLockModuleMissingError);
      expect((leaderError as Error).message).toMatch(/^@WhenLeader on Job\.run found no LockService/);
    });

    it('refuses a result read after the release (Observable, StreamableFile, stream) once the body ran, and releases', async () => {
      const made: string[] = [];
      class Streams {
        // Typed loosely, as code the compiler cannot check (the types refuse the precise ones).
        @WithLock('streams')
        async give(kind: string): Promise<any> {
          made.push(kind);
          if (kind === 'observable') return of(1, 2);
          if (kind === 'file') return new StreamableFile(Buffer.from('x'));
          if (kind === 'readable') return Readable.from(['x']);
          if (kind === 'web') return new ReadableStream();
          // Plain values pass, also with a method named like a stream's.
          if (kind === 'pipeline') return { steps: 3, pipe: () => 'next step' };
          return { rows: [1, 2], subscribe: () => 'newsletter' };
        }
      }
      const app = await startApp({ providers: [] });
      try {
        for (const [kind, what] of [
          ['observable', 'an Observable'],
          ['file', 'a StreamableFile'],
          ['readable', 'a stream'],
          ['web', 'a stream'],
        ] as const) {
          const error = await new Streams().give(kind).catch((e: unknown) => e);
          expect(error).toBeInstanceOf(WithLockUsageError);
          expect((error as Error).message).toContain(`@WithLock cannot cover Streams.give: it returned ${what}`);
          expect(await lockNodes(app, 'streams')).toBeNull(); // released all the same
        }
        await expect(new Streams().give('plain')).resolves.toMatchObject({ rows: [1, 2] });
        await expect(new Streams().give('pipeline')).resolves.toMatchObject({ steps: 3 });
        expect(made).toEqual(['observable', 'file', 'readable', 'web', 'plain', 'pipeline']); // each body ran, under the lock
      } finally {
        await app.close();
      }
    });

    it('turns a key function that throws or returns a non-string into InvalidLockNameError', async () => {
      const app = await startApp({ providers: [] });
      try {
        const before = backendOf(app).client.counter.total();
        for (const [arg, pattern] of [
          ['boom', /threw: no key for boom/],
          [42, /must return a non-empty string/],
          ['', /must return a non-empty string/],
        ] as const) {
          const error = await new Plain().run(arg).catch((e: unknown) => e);
          expect(error).toBeInstanceOf(InvalidLockNameError);
          expect((error as Error).message).toMatch(pattern);
          expect((error as Error).message).toContain('Plain.run');
        }
        expect(backendOf(app).client.counter.total()).toBe(before); // nothing sent
        await expect(new Plain().run('fine')).resolves.toBe('ran');
      } finally {
        await app.close();
      }
    });
  });
});
