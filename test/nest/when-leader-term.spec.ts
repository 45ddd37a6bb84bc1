import 'reflect-metadata';
import { Controller, Get, Inject, Injectable, Logger, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';

import {
  InMemoryLockBackend,
  InMemoryLockStore,
  InvalidOptionError,
  LeadershipService,
  LockLostError,
  WhenLeader,
  ZK_LOCK_BACKEND,
  ZkLockModule,
  type LeaderTerm,
  type ZkLockTestingOptions,
} from '../../lib/index';
import { waitUntil } from '../support/wait-until';

// @WhenLeader's guarantees over the in-memory backend (forTesting): the term a call runs
// under, a term lost while it runs, shutdown waiting for it. Across processes on ZooKeeper:
// test/fixtures/leader-work.spec.ts.

/** A promise the test opens by hand. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

@Injectable()
class Reports {
  readonly log: string[] = [];
  inside = gate();
  terms: Array<LeaderTerm | undefined> = [];

  constructor(
    private readonly leadership: LeadershipService,
    @Inject(ZK_LOCK_BACKEND) readonly backend: InMemoryLockBackend,
  ) {}

  @WhenLeader('reports')
  async build(): Promise<string | undefined> {
    const term = this.leadership.term('reports');
    this.terms.push(term);
    this.log.push(`started ${term?.fencingToken}`);
    await this.inside.opened;
    this.terms.push(this.leadership.term('reports'));
    this.log.push('ended');
    return 'built';
  }

  @WhenLeader('reports', { onLockLost: 'ignore' })
  async buildAnyway(): Promise<string | undefined> {
    await this.inside.opened;
    return 'built anyway';
  }
}

@Controller('report')
class ReportController {
  constructor(@Inject(ZK_LOCK_BACKEND) private readonly backend: InMemoryLockBackend) {}

  @Get()
  @WhenLeader('reports')
  async report(): Promise<string | undefined> {
    this.backend.loseLock('leader:reports'); // a test control: the term ends mid-call
    return 'report';
  }
}

async function start(options?: ZkLockTestingOptions): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [ZkLockModule.forTesting(options)],
    providers: [Reports],
    controllers: [ReportController],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  await waitUntil(() => app.get(LeadershipService).isLeader('reports'), 'the instance leads');
  return app;
}

describe('@WhenLeader and LeadershipService.term(group) (forTesting)', () => {
  let warn: jest.SpyInstance;
  beforeEach(() => (warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined)));
  afterEach(() => warn.mockRestore());

  it('term(group) is one object per term, with the leader lock token; inside a call, the term it started under', async () => {
    const app = await start();
    try {
      const leadership = app.get(LeadershipService);
      const reports = app.get(Reports);
      const term = leadership.term('reports')!;
      expect(term).toBe(leadership.term('reports'));
      expect(leadership.signal('reports')).toBe(term.signal);
      const [holder] = (await reports.backend.contenders('leader:reports')).filter((c) => c.holding);
      expect(holder).toBeDefined();
      expect(term.fencingToken).toBeGreaterThan(0n);
      expect(leadership.term('elsewhere')).toBeUndefined();

      const call = reports.build().catch((error: unknown) => error);
      await waitUntil(() => reports.log.length === 1, 'the call started');
      reports.backend.loseLock('leader:reports');
      expect(term.signal.aborted).toBe(true);
      await waitUntil(() => leadership.term('reports') !== undefined, 'a new term');
      const next = leadership.term('reports')!;
      expect(next).not.toBe(term);
      expect(next.fencingToken).toBeGreaterThan(term.fencingToken);
      reports.inside.open();
      const error = await call;
      expect(error).toBeInstanceOf(LockLostError);
      expect(error).toBe(term.signal.reason);
      // The call read its own term throughout, never the next one's token.
      expect(reports.terms).toEqual([term, term]);
      expect(warn).toHaveBeenCalledWith(
        expect.stringMatching(/^The term of leadership of group "reports" that Reports\.build started under ended/),
      );
    } finally {
      await app.close();
    }
  });

  it("onLockLost: 'ignore' keeps the result; the loss is still logged", async () => {
    const app = await start();
    try {
      const reports = app.get(Reports);
      const call = reports.buildAnyway();
      reports.backend.loseLock('leader:reports');
      reports.inside.open();
      await expect(call).resolves.toBe('built anyway');
      expect(warn).toHaveBeenCalledWith(expect.stringMatching(/onLockLost: 'ignore'/));
    } finally {
      await app.close();
    }
  });

  it('a term lost under an HTTP handler: 503 with code LOCK_LOST instead of success', async () => {
    const app = await start();
    try {
      const response = await request(app.getHttpServer()).get('/report').expect(503);
      expect(response.body).toMatchObject({ code: 'LOCK_LOST', message: expect.stringMatching(/^The request lost/) });
      expect(response.body.message).not.toContain('leader:reports');
    } finally {
      await app.close();
    }
  });

  it('shutdown waits for a running call (within shutdownGraceMs) before stepping down; the next instance leads after it', async () => {
    const store = new InMemoryLockStore();
    // Past what a timer can wait (Node would fire it after 1 ms): still a grace, not none.
    const a = await start({ store, identity: 'a', shutdownGraceMs: 2 ** 31 });
    const b = await Test.createTestingModule({
      imports: [ZkLockModule.forTesting({ store, identity: 'b' })],
      providers: [Reports],
      controllers: [ReportController],
    })
      .compile()
      .then((moduleRef) => moduleRef.init());
    const order: string[] = [];
    try {
      const reports = a.get(Reports);
      const term = a.get(LeadershipService).term('reports')!;
      term.signal.addEventListener('abort', () => order.push('a: term ended'));
      b.get(LeadershipService).onChange('reports', ({ leading }) => leading && order.push('b: leads'));
      const call = reports.build().then((value) => (order.push('a: call resolved'), value));
      await waitUntil(() => reports.log.length === 1, 'the call started');
      const closed = a.close().then(() => order.push('a: closed'));
      await new Promise((r) => setTimeout(r, 200));
      expect(order).toEqual([]); // a still leads: its call runs
      await expect(b.get(Reports).build()).resolves.toBeUndefined(); // b does not lead
      expect(b.get(Reports).log).toEqual([]);
      reports.inside.open();
      await closed;
      await expect(call).resolves.toBe('built');
      expect(order).toEqual(['a: call resolved', 'a: term ended', 'b: leads', 'a: closed']);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('bad @WhenLeader options: InvalidOptionError naming the option, when the class is defined', () => {
    const decorate = (options: unknown) => () => {
      class Job {
        @WhenLeader('g', options as never)
        async run(): Promise<void> {}
      }
      return Job;
    };
    expect(decorate({ onLockLost: 'maybe' })).toThrow(InvalidOptionError);
    expect(decorate({ onLockLost: 'maybe' })).toThrow(/onLockLost/);
    expect(decorate({ onLockLots: 'ignore' })).toThrow(/did you mean "onLockLost"/);
    expect(decorate({ onLost: () => undefined })).toThrow(InvalidOptionError); // the core's callback is not the decorator's
    expect(decorate({ onLockLost: 'ignore' })).not.toThrow();
  });
});
