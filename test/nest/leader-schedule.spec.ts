import 'reflect-metadata';
import { Inject, Injectable, type INestApplication, type Type } from '@nestjs/common';
import { Cron, CronExpression, Interval, ScheduleModule, SchedulerRegistry, Timeout } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { CronJob } from 'cron';
import { setTimeout as sleep } from 'node:timers/promises';

import {
  InMemoryLockStore,
  InvalidOptionError,
  LeadershipService,
  LockService,
  WhenLeader,
  ZK_LOCK_BACKEND,
  ZkLockModule,
  type InMemoryLockBackend,
  type ZkLockModuleOptions,
} from '../../lib/index';
import { LeaderJobError, LeaderOnly, LeaderScheduler } from '../../lib/schedule';
import { filesLoadedByMainEntry } from '../support/main-entry-loads';
import { TcpProxy } from '../support/tcp-proxy';
import { waitUntil } from '../support/wait-until';
import { uniqueRoot, zkConnect, zkPort } from '../support/zk-test-env';
import { backendOf } from './nest-fixture';

const NODE = Symbol('node');
/** Every tick and every start/stop of a job, of every application, in order. */
const events: string[] = [];

@Injectable()
class Ticker {
  constructor(@Inject(NODE) private readonly node: string) {}

  @Cron(CronExpression.EVERY_SECOND, { name: 'tick' })
  @LeaderOnly('ticker')
  tick(): void {
    events.push(`${this.node}:tick`);
  }
}

async function start(lockModule: ReturnType<typeof ZkLockModule.forRoot>, providers: Type[], node = '?') {
  const moduleRef = await Test.createTestingModule({
    imports: [ScheduleModule.forRoot(), lockModule],
    providers: [LeaderScheduler, ...providers, { provide: NODE, useValue: node }],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
}

/** An instance of the service: `Ticker`'s job, and a job added at run time that follows the same group. */
async function startNode(
  node: string,
  options: Partial<ZkLockModuleOptions>,
  providers: Type[] = [],
): Promise<INestApplication> {
  const app = await start(
    ZkLockModule.forRoot({ connectionString: zkConnect(), sessionTimeoutMs: 4000, identity: node, ...options }),
    [Ticker, ...providers],
    node,
  );
  const registry = app.get(SchedulerRegistry);
  const runtime = CronJob.from({
    cronTime: '* * * * * *',
    onTick: () => void events.push(`${node}:runtime`),
    start: true,
  });
  registry.addCronJob('runtime', runtime);
  app.get(LeaderScheduler).followLeadership('ticker', { cronJobs: ['runtime'] });
  for (const name of ['tick', 'runtime']) {
    const job = registry.getCronJob(name);
    const [jobStart, jobStop] = [job.start.bind(job), job.stop.bind(job)];
    job.start = () => (events.push(`${node}:start ${name}`), jobStart());
    job.stop = () => (events.push(`${node}:stop ${name}`), jobStop());
  }
  return app;
}

const jobs = (app: INestApplication) => {
  const registry = app.get(SchedulerRegistry);
  return ['tick', 'runtime'].map((name) => registry.getCronJob(name));
};
const count = (event: string) => events.filter((seen) => seen === event).length;

/** Two instances, A (behind a proxy, to be cut off) and B, running a per-second job that follows leadership. */
describe('@nestjs/schedule jobs that follow leadership (LeaderScheduler, @LeaderOnly)', () => {
  const rootPath = uniqueRoot('leader-schedule');
  let proxy: TcpProxy;
  let a: INestApplication | undefined;
  let b: INestApplication | undefined;
  /** Whether each instance's `tick` job was running when @nestjs/schedule registered it at bootstrap. */
  const activeWhenRegistered: boolean[] = [];
  beforeAll(async () => {
    const addCronJob = SchedulerRegistry.prototype.addCronJob;
    jest.spyOn(SchedulerRegistry.prototype, 'addCronJob').mockImplementation(function (
      this: SchedulerRegistry,
      name,
      job,
    ) {
      if (name === 'tick') activeWhenRegistered.push(job.isActive);
      addCronJob.call(this, name, job);
    });
    proxy = new TcpProxy(zkPort());
    await proxy.start();
    a = await startNode('A', { connectionString: proxy.connectionString, rootPath });
    await waitUntil(() => a!.get(LeadershipService).isLeader('ticker'), 'A leads');
    b = await startNode('B', { rootPath });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await proxy?.stop();
    jest.restoreAllMocks();
  });

  it("the leader's jobs tick; the follower's were registered stopped and never fired", async () => {
    expect(await b!.get(LeadershipService).leader('ticker')).toBe('A'); // read from ZooKeeper
    expect(activeWhenRegistered).toEqual([false, false]); // not started by @nestjs/schedule, even on A
    await waitUntil(() => count('A:tick') >= 2 && count('A:runtime') >= 2, 'both of A’s jobs tick');
    expect(jobs(a!).map((job) => job.isActive)).toEqual([true, true]);
    expect(jobs(b!).map((job) => [job.isActive, job.lastDate()])).toEqual([
      [false, null],
      [false, null],
    ]);
    expect(events.filter((event) => event.startsWith('B:'))).toEqual([]);
  });

  it('a leader cut off stops its jobs before the other instance starts its own', async () => {
    proxy.blackhole();
    await waitUntil(() => count('B:tick') >= 2 && count('B:runtime') >= 2, 'B’s jobs tick', 20_000);
    expect(jobs(a!).map((job) => job.isActive)).toEqual([false, false]);
    const firstOfB = events.findIndex((event) => event.startsWith('B:'));
    expect(events.slice(firstOfB).filter((event) => event.startsWith('A:'))).toEqual([]);
    expect(events.slice(firstOfB - 2, firstOfB + 2).sort()).toEqual([
      'A:stop runtime',
      'A:stop tick',
      'B:start runtime',
      'B:start tick',
    ]);
  });

  it("once back, the old leader follows; on the leader's close it leads and its jobs tick again", async () => {
    proxy.heal();
    await waitUntil(
      async () => (await a!.get(LeadershipService).leader('ticker')) === 'B' && (await contenders(a!)) === 2,
      'A queues again behind B',
      20_000,
    );
    expect(jobs(a!).map((job) => job.isActive)).toEqual([false, false]);
    const ticksOfA = count('A:tick');
    await b!.close();
    b = undefined;
    await waitUntil(() => count('A:tick') > ticksOfA + 1, 'A’s job ticks again', 20_000);
    const startOfA = events.lastIndexOf('A:start tick');
    expect(events.slice(startOfA).filter((event) => event.startsWith('B:'))).toEqual([]);
    expect(events.slice(0, startOfA)).toEqual(expect.arrayContaining(['B:stop tick', 'B:stop runtime']));
    expect(jobs(a!).map((job) => job.isActive)).toEqual([true, true]);
    await a!.close();
    a = undefined;
    const closed = events.length;
    await new Promise((resolve) => setTimeout(resolve, 1500)); // a per-second job would have ticked
    expect(events.slice(closed)).toEqual([]);
  });
});

/** Candidates queued for the group, read from ZooKeeper. */
const contenders = async (app: INestApplication): Promise<number> =>
  (await backendOf(app).contenders('leader:ticker')).length;

@Injectable()
class OtherJobs {
  // @LeaderOnly above @Cron this time.
  @LeaderOnly('ticker')
  @Cron(CronExpression.EVERY_SECOND, { name: 'reversed' })
  reversed(): void {}

  // Its author's `disabled` wins: it never starts.
  @Cron(CronExpression.EVERY_SECOND, { name: 'disabled', disabled: true })
  @LeaderOnly('ticker')
  disabled(): void {}
}

/** Two applications sharing an in-memory store (`forTesting({ store })`): two instances of one service, without ZooKeeper. */
describe('LeaderScheduler over ZkLockModule.forTesting()', () => {
  it("the leader's job runs, the other's is stopped; a lost leader lock moves the job", async () => {
    const store = new InMemoryLockStore();
    const [one, two] = [
      await start(ZkLockModule.forTesting({ store, identity: 'one' }), [Ticker, OtherJobs], 'one'),
      await start(ZkLockModule.forTesting({ store, identity: 'two' }), [Ticker, OtherJobs], 'two'),
    ];
    try {
      // [tick, reversed, disabled] of each application.
      const active = () =>
        [one, two].map((app) =>
          ['tick', 'reversed', 'disabled'].map((name) => app.get(SchedulerRegistry).getCronJob(name).isActive),
        );
      await waitUntil(() => one.get(LeadershipService).isLeader('ticker'), 'one leads');
      expect(active()).toEqual([
        [true, true, false],
        [false, false, false],
      ]);
      one.get<InMemoryLockBackend>(ZK_LOCK_BACKEND).loseLock('leader:ticker');
      expect(active()[0]).toEqual([false, false, false]); // stopped as it was told, before the lock was released
      await waitUntil(() => two.get(LeadershipService).isLeader('ticker'), 'two leads');
      expect(active()).toEqual([
        [false, false, false],
        [true, true, false],
      ]);
    } finally {
      await one.close();
      await two.close();
    }
  });
});

/** `@Cron`'s options as the class keeps them, read by every application in the process. */
const cronOptionsOf = (method: Function): { disabled?: boolean } =>
  Reflect.getMetadata('SCHEDULE_CRON_OPTIONS', method) as { disabled?: boolean };

describe("@LeaderOnly's mark is one application's: two applications in one process", () => {
  /** An application of `Ticker` and `OtherJobs` without LeaderScheduler: plain `@Cron` jobs. */
  const startPlain = async (): Promise<INestApplication> => {
    const moduleRef = await Test.createTestingModule({
      imports: [ScheduleModule.forRoot(), ZkLockModule.forTesting({ identity: 'plain' })],
      providers: [Ticker, OtherJobs, { provide: NODE, useValue: 'plain' }],
    }).compile();
    return moduleRef.createNestApplication({ logger: false }).init();
  };
  const active = (app: INestApplication) =>
    ['tick', 'reversed', 'disabled'].map((name) => app.get(SchedulerRegistry).getCronJob(name).isActive);

  it('one without LeaderScheduler started after one with it runs the jobs as plain @Cron; a third with it follows again', async () => {
    const store = new InMemoryLockStore();
    const apps: INestApplication[] = [];
    try {
      apps.push(await start(ZkLockModule.forTesting({ store, identity: 'one' }), [Ticker, OtherJobs], 'one'));
      await waitUntil(() => apps[0].get(LeadershipService).isLeader('ticker'), 'one leads');
      // Its jobs are mounted: the class's options are as their author wrote them again.
      expect(
        [Ticker.prototype.tick, OtherJobs.prototype.reversed, OtherJobs.prototype.disabled].map(
          (m) => cronOptionsOf(m).disabled,
        ),
      ).toEqual([undefined, undefined, true]);
      apps.push(await startPlain());
      expect(active(apps[1])).toEqual([true, true, false]); // started by @nestjs/schedule; its author's disabled stays
      apps.push(await start(ZkLockModule.forTesting({ store, identity: 'two' }), [Ticker, OtherJobs], 'two'));
      expect(active(apps[2])).toEqual([false, false, false]); // a follower of one: registered stopped
      expect(active(apps[0])).toEqual([true, true, false]);
    } finally {
      for (const app of apps) await app.close();
    }
  });
});

class IntervalJob {
  @Interval('every', 1000)
  @LeaderOnly('g')
  run() {}
}

class TimeoutJob {
  @Timeout('once', 1000)
  @LeaderOnly('g')
  run() {}
}

class UnnamedJob {
  @LeaderOnly('g')
  @Cron(CronExpression.EVERY_SECOND)
  run() {}
}

class NotAJob {
  @LeaderOnly('g')
  run() {}
}

class EagerJob {
  @Cron(CronExpression.EVERY_SECOND, { name: 'eager', runOnInit: true } as never)
  @LeaderOnly('g')
  run() {}
}

class LateJob {
  @Cron(CronExpression.EVERY_SECOND, { name: 'late', initialDelay: 1000 })
  @LeaderOnly('g')
  run() {}
}

describe('LeaderScheduler: what cannot follow leadership is refused at start-up', () => {
  const testing = () => ZkLockModule.forTesting();

  it.each<[string, Type, RegExp]>([
    [
      'an @Interval',
      IntervalJob,
      /@LeaderOnly on IntervalJob\.run: only @Cron jobs can follow leadership, and this is an @Interval/,
    ],
    [
      'a @Timeout',
      TimeoutJob,
      /@LeaderOnly on TimeoutJob\.run: only @Cron jobs can follow leadership, and this is a @Timeout/,
    ],
    ['a @Cron without a name', UnnamedJob, /@LeaderOnly on UnnamedJob\.run: give its @Cron a name/],
    ['no @Cron', NotAJob, /@LeaderOnly on NotAJob\.run: it has no @Cron/],
    ['runOnInit', EagerJob, /@LeaderOnly on EagerJob\.run: @Cron's runOnInit acts on every instance/],
    ['initialDelay', LateJob, /@LeaderOnly on LateJob\.run: @Cron's initialDelay acts on every instance/],
  ])('%s: LeaderJobError, naming the method', async (_, job, message) => {
    const failed = await start(testing(), [job]).then(
      () => new Error('started'),
      (error: unknown) => error,
    );
    expect(failed).toBeInstanceOf(LeaderJobError);
    expect((failed as Error).message).toMatch(message);
  });

  it('followLeadership of a job that does not exist: LeaderJobError, and none of the list is followed', async () => {
    const app = await start(testing(), []);
    try {
      const registry = app.get(SchedulerRegistry);
      const running = CronJob.from({ cronTime: '0 0 1 1 *', onTick: () => undefined, start: true });
      registry.addCronJob('running', running);
      const follow = () => app.get(LeaderScheduler).followLeadership('g', { cronJobs: ['running', 'missing'] });
      expect(follow).toThrow(LeaderJobError);
      expect(follow).toThrow(/followLeadership\("g"\) found no cron job named "missing" in SchedulerRegistry/);
      expect(running.isActive).toBe(true);
      expect(() => app.get(LeaderScheduler).followLeadership('g', { cronJobs: 'running' } as never)).toThrow(
        InvalidOptionError,
      );
      expect(() => app.get(LeaderScheduler).followLeadership('g', { cronJob: ['running'] } as never)).toThrow(
        /did you mean "cronJobs"/,
      );
      expect(running.isActive).toBe(true);
    } finally {
      await app.close();
    }
  });

  it('the main entry point loads nothing of @nestjs/schedule (an optional peer) nor of cron', () => {
    expect(filesLoadedByMainEntry(/@nestjs[\\/]schedule|[\\/]cron[\\/]/)).toEqual([]);
  });
});

describe('LeaderScheduler at shutdown', () => {
  let finishReport!: () => void;
  const reportMayFinish = new Promise<void>((resolve) => (finishReport = resolve));

  @Injectable()
  class Reports {
    @WhenLeader('ticker')
    async report(): Promise<void> {
      await reportMayFinish; // runs through the shutdown grace, keeping this instance the leader
    }
  }

  it("stops the leader's jobs at once, while a running @WhenLeader method keeps it leading through the grace", async () => {
    const start = events.length;
    const app = await startNode('S', { rootPath: uniqueRoot('leader-schedule-shutdown'), shutdownGraceMs: 30_000 }, [
      Reports,
    ]);
    try {
      await waitUntil(() => app.get(LeadershipService).isLeader('ticker'), 'S leads');
      await waitUntil(() => count('S:tick') >= 1 && count('S:runtime') >= 1, 'both of S’s jobs tick');
      const reporting = app.get(Reports).report();
      const closing = app.close();
      // Shutdown began (the lock module's hook runs after LeaderScheduler's); S still leads,
      // waiting for its @WhenLeader method.
      await waitUntil(() => app.get(LockService).shuttingDown, 'shutdown began');
      expect(app.get(LeadershipService).isLeader('ticker')).toBe(true);
      const began = events.length;
      // Long enough for a per-second job to tick twice, had it gone on.
      await sleep(2500);
      expect(app.get(LeadershipService).isLeader('ticker')).toBe(true);
      expect(events.slice(began)).toEqual([]);
      expect(events.slice(start)).toContain('S:stop tick');
      finishReport();
      await reporting;
      await closing;
    } finally {
      finishReport();
      await app.close();
    }
  });
});
