import 'reflect-metadata';
import { Controller, Get, Injectable, Logger, type INestApplicationContext } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { EventEmitter2, EventEmitterModule, OnEvent } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';

import {
  LeadershipService,
  LockLostError,
  NotLeaderError,
  WhenLeader,
  WhenLeaderUsageError,
  ZkLockModule,
  type LeadershipChange,
  type LeaderInfo,
} from '../../lib/index';
import { waitUntil } from '../support/wait-until';
import { uniqueRoot, zkConnect } from '../support/zk-test-env';
import { ZkInspector } from '../support/zookeeper/zk-inspector';
import { backendOf } from './nest-fixture';

// The test server runs with tickTime 200 ms, so sessions last 4 s at most.
const SESSION_MS = 4000;
// @nestjs/event-emitter's metadata key for @OnEvent, a method decorator of the same kind as @Cron.
const EVENT_LISTENER_METADATA = 'EVENT_LISTENER_METADATA';

@Injectable()
class ReportJob {
  runs = 0;

  // Other method decorators keep working whichever side of @WhenLeader they are on.
  @OnEvent('report.tick')
  @WhenLeader('reports')
  async run(): Promise<string | undefined> {
    this.runs += 1;
    return 'ran';
  }

  @WhenLeader('reports')
  @OnEvent('report.sync')
  async countSync(): Promise<number | undefined> {
    return ++this.runs;
  }
}

@Controller('status')
class StatusController {
  @WhenLeader('status')
  @Get('leader')
  async leader(): Promise<string | undefined> {
    return 'leading';
  }
}

describe('LeadershipService and @WhenLeader', () => {
  const root = uniqueRoot('nest-leadership');
  let inspector: ZkInspector;
  const apps = new Map<string, INestApplicationContext>();
  beforeAll(async () => (inspector = await ZkInspector.connect(zkConnect())));
  afterAll(async () => {
    await Promise.all([...apps.values()].map((app) => app.close()));
    await inspector.removeTree(root);
    await inspector.close();
  });

  async function start(identity: string): Promise<INestApplicationContext> {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ZkLockModule.forRoot({
          connectionString: zkConnect(),
          rootPath: root,
          identity,
          sessionTimeoutMs: SESSION_MS,
          emptyDirectoryGraceMs: 0,
        }),
        EventEmitterModule.forRoot(),
      ],
      providers: [ReportJob],
      controllers: [StatusController],
    }).compile();
    const app = await moduleRef.init();
    apps.set(identity, app);
    return app;
  }

  /** Identities in the queue for `group`'s leader lock, in sequence order. */
  async function queue(group: string): Promise<string[]> {
    const dir = backendOf([...apps.values()][0]).pathOf(`leader:${group}`);
    const nodes = ((await inspector.children(dir)) ?? []).sort((x, y) => Number(x.slice(-10)) - Number(y.slice(-10)));
    return Promise.all(nodes.map(async (node) => (await inspector.data(`${dir}/${node}`)) ?? '?'));
  }

  const leads = (app: INestApplicationContext, group = 'reports') => app.get(LeadershipService).isLeader(group);

  it('keeps the metadata of other decorators, and marks the method with its group', () => {
    for (const key of ['run', 'countSync'] as const) {
      const method = ReportJob.prototype[key];
      expect(method.name).toBe(key);
      expect(Reflect.getMetadata(EVENT_LISTENER_METADATA, method)).toEqual([
        expect.objectContaining({ event: key === 'run' ? 'report.tick' : 'report.sync' }),
      ]);
      expect(Reflect.getMetadata(Symbol.for('nestjs-zk-lock.when-leader'), method)).toBe('reports');
    }
    expect(Reflect.getMetadata(PATH_METADATA, StatusController.prototype.leader)).toBe('leader');
    expect(Reflect.getMetadata(METHOD_METADATA, StatusController.prototype.leader)).toBe(0); // GET
  });

  it('runs @WhenLeader methods on the leader only, and hands over at once when the leader shuts down', async () => {
    const a = await start('app-a');
    await waitUntil(() => leads(a), 'app-a leads');
    const b = await start('app-b');
    await waitUntil(async () => (await queue('reports')).length === 2, 'app-b queues');
    const c = await start('app-c');
    await waitUntil(async () => (await queue('reports')).length === 3, 'app-c queues');

    expect(await queue('reports')).toEqual(['app-a', 'app-b', 'app-c']);
    expect([a, b, c].map((app) => leads(app))).toEqual([true, false, false]);
    const verbose = jest.spyOn(Logger.prototype, 'verbose');
    try {
      expect(await Promise.all([a, b, c].map((app) => app.get(ReportJob).run()))).toEqual([
        'ran',
        undefined,
        undefined,
      ]);
      // One verbose line per skipped call (routine: not at debug, which Nest prints by default), under the library's logger context.
      const skips = verbose.mock.calls
        .map(([message], i) => ({
          message,
          context: (verbose.mock.contexts[i] as unknown as { context?: string }).context,
        }))
        .filter(({ message }) => /@WhenLeader/.test(String(message)));
      const skipped = {
        message: 'Skipped ReportJob.run: this instance does not lead group "reports" (@WhenLeader).',
        context: 'ZkLock',
      };
      expect(skips).toEqual([skipped, skipped]);
    } finally {
      verbose.mockRestore();
    }
    // Through @OnEvent, in each application: only the leader's handler does the work.
    await Promise.all([a, b, c].map((app) => app.get(EventEmitter2).emitAsync('report.tick')));
    await Promise.all([a, b, c].map((app) => app.get(EventEmitter2).emitAsync('report.sync')));
    expect([a, b, c].map((app) => app.get(ReportJob).runs)).toEqual([3, 0, 0]);
    expect(await Promise.all([a, b, c].map((app) => app.get(LeadershipService).leader('reports')))).toEqual([
      'app-a',
      'app-a',
      'app-a',
    ]);
    // The controller's group was joined too (the first application leads it).
    expect(await a.get(LeadershipService).leader('status')).toBe('app-a');

    const changes: Array<LeadershipChange & { at: number }> = [];
    b.get(LeadershipService).onChange('reports', (change) => changes.push({ ...change, at: performance.now() }));
    const signal = a.get(LeadershipService).signal('reports')!;
    expect(signal.aborted).toBe(false);
    expect(b.get(LeadershipService).signal('reports')).toBeUndefined();

    const closing = performance.now();
    await a.close();
    apps.delete('app-a');
    await waitUntil(() => changes.length > 0, 'app-b is told it leads');
    const handover = changes[0].at - closing;
    console.log(`leader application close() -> next leads: ${handover.toFixed(1)} ms`);
    expect(handover).toBeLessThan(SESSION_MS / 4); // not after the closed instance's session timeout
    expect(changes).toEqual([{ group: 'reports', leading: true, at: expect.any(Number) }]);
    expect(signal.aborted).toBe(true); // the old leader was told it stepped down
    expect(signal.reason).toBeInstanceOf(LockLostError);
    expect(await queue('reports')).toEqual(['app-b', 'app-c']); // its node went with the close

    expect(leads(b)).toBe(true);
    expect(await Promise.all([b, c].map((app) => app.get(ReportJob).run()))).toEqual(['ran', undefined]);
    expect(await c.get(LeadershipService).leader('reports')).toBe('app-b');
  });

  it('join() and leave() by hand: leaving hands over at once, joining again queues at the end', async () => {
    const [b, c] = [apps.get('app-b')!, apps.get('app-c')!];
    const [lb, lc] = [b.get(LeadershipService), c.get(LeadershipService)];
    lb.join('manual');
    await waitUntil(() => lb.isLeader('manual'), 'app-b leads manual');
    lc.join('manual');
    lc.join('manual'); // idempotent
    await waitUntil(async () => (await queue('manual')).length === 2, 'app-c queues');

    await lb.leave('manual');
    await waitUntil(() => lc.isLeader('manual'), 'app-c leads manual');
    expect(await queue('manual')).toEqual(['app-c']);
    lb.join('manual');
    await waitUntil(async () => (await queue('manual')).length === 2, 'app-b queues again');
    expect(await queue('manual')).toEqual(['app-c', 'app-b']);
    expect(lb.isLeader('manual')).toBe(false);
    expect(() => lb.join('')).toThrow(/Invalid leader group ""/);
  });

  it('observe() is an Observable of who leads and what it proclaimed; proclaim() only by the leader; observers complete at shutdown', async () => {
    const [b, c] = [apps.get('app-b')!, apps.get('app-c')!];
    const [lb, lc] = [b.get(LeadershipService), c.get(LeadershipService)];
    const seen: Array<LeaderInfo | null> = [];
    const subscription = lc.observe('reports').subscribe((leader) => seen.push(leader));
    await waitUntil(() => seen.at(-1)?.leader === 'app-b', 'app-c sees app-b lead');
    expect(seen.at(-1)).toMatchObject({
      group: 'reports',
      fencingToken: lb.term('reports')!.fencingToken,
      value: null,
    });

    await expect(lc.proclaim('reports', 'not me')).rejects.toBeInstanceOf(NotLeaderError);
    await expect(lc.proclaim('never-joined', 1)).rejects.toBeInstanceOf(NotLeaderError);
    await lb.proclaim('reports', { url: 'http://app-b:3000' });
    await waitUntil(() => seen.at(-1)?.value !== null, 'app-c sees the value');
    expect(seen.at(-1)).toMatchObject({ leader: 'app-b', value: { url: 'http://app-b:3000' } });
    // ZooKeeper's own state: the term record names app-b's lock node and its token.
    const backend = backendOf(b);
    const record = JSON.parse((await inspector.data(`${root}-records/leader:reports`))!) as Record<string, unknown>;
    const holder = (await backend.contenders('leader:reports')).find((x) => x.holding)!;
    expect(record).toEqual({
      node: holder.node,
      token: String(lb.term('reports')!.fencingToken),
      value: { url: 'http://app-b:3000' },
    });
    subscription.unsubscribe();
    const count = seen.length;
    await lb.proclaim('reports', { url: 'http://app-b:3001' });
    await backend.releasesConfirmed();
    expect(seen).toHaveLength(count); // unsubscribed: told nothing more

    let completed = false;
    lb.observe('reports').subscribe({ complete: () => (completed = true) });
    expect(() => lb.observe('')).toThrow(/Invalid leader group ""/);
    await b.close();
    apps.delete('app-b');
    expect(completed).toBe(true);
  });

  it('refuses a bad group, or something that is not a method, when the class is defined', () => {
    expect(() => WhenLeader('')).toThrow(WhenLeaderUsageError);
    expect(() => WhenLeader(42 as never)).toThrow(/needs a leader group: a non-empty string .* not number/);
    expect(() => WhenLeader('x\ud800')).toThrow(/lone UTF-16 surrogate/);
    expect(() => {
      class Bad {
        // @ts-expect-error: a property decorator use, on purpose
        @WhenLeader('g') value = 1;
      }
      return Bad;
    }).toThrow(WhenLeaderUsageError);
    expect(() => {
      class BadAccessor {
        // @ts-expect-error: an accessor is not a method (as code compiled without type checks would do)
        @WhenLeader('g')
        get value(): number {
          return 1;
        }
      }
      return BadAccessor;
    }).toThrow(/@WhenLeader can only decorate a method, and BadAccessor.value is not one/);
  });
});
