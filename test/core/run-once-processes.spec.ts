import type { ZkLockBackend } from '../../lib/index';
import { LockFixture } from '../support/lock-fixture';
import { waitUntil } from '../support/wait-until';
import { WorkerProcess } from '../support/worker-process';
import { zkConnect } from '../support/zk-test-env';

/** One line of run-once.worker.ts's stdout. */
interface StepEvent {
  /** Date.now() in the worker: the same clock as the other workers'. */
  t: number;
  event: 'connected' | 'running' | 'ran' | 'resolved' | 'failed';
  ran?: boolean;
  /** The name of the error a `failed` runOnce rejected with. */
  error?: string;
}

const parse = (line: string): StepEvent => JSON.parse(line) as StepEvent;
const isEvent = (event: StepEvent['event']) => (line: string) => parse(line).event === event;
const events = (worker: WorkerProcess): string[] => worker.lines.map((line) => parse(line).event);

describe('runOnce across processes: a start-up step run by exactly one instance', () => {
  let fx: LockFixture;
  let observer: ZkLockBackend;
  const workers: WorkerProcess[] = [];
  beforeAll(async () => {
    fx = await LockFixture.create('run-once-processes');
    observer = await fx.backend(); // the observer fx.nodes reads through
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.kill()));
  });
  afterAll(() => fx.cleanup());

  function instance(by: string, key: string, sessionTimeoutMs = 4000): WorkerProcess {
    const worker = WorkerProcess.spawn('run-once.worker.ts', {
      connectionString: zkConnect(),
      rootPath: fx.rootPath,
      key,
      by,
      sessionTimeoutMs,
    });
    workers.push(worker);
    return worker;
  }

  /** The instance among `started` that prints `running` first, once one does. */
  async function runnerAmong(started: WorkerProcess[]): Promise<WorkerProcess> {
    // One wait for all (a `line()` wait per worker would poll on after the race is won).
    await waitUntil(() => started.some((w) => events(w).includes('running')), 'an instance running the step', 30_000);
    return started.find((w) => events(w).includes('running'))!;
  }

  const recordOf = async (key: string): Promise<unknown> => {
    const json = await fx.inspector.data(`${fx.rootPath}-records/run-once%2F${key}`);
    return json === null ? null : JSON.parse(json);
  };

  it('three processes started together: one runs it, all resolve after its end, the record says who', async () => {
    const key = 'migrate';
    const started = ['a', 'b', 'c'].map((by) => instance(by, key));
    const runner = await runnerAmong(started);
    await fx.queued(key, 3); // the other two wait behind it
    expect(await recordOf(key)).toBeNull();
    runner.signal('SIGUSR2'); // the step ends

    const resolved = await Promise.all(started.map(async (w) => parse(await w.line(isEvent('resolved'), 'resolved'))));
    expect(resolved.map((r) => r.ran)).toEqual(started.map((w) => w === runner));
    const ran = parse(await runner.line(isEvent('ran'), 'ran'));
    for (const r of resolved) expect(r.t).toBeGreaterThanOrEqual(ran.t);
    for (const w of started.filter((w) => w !== runner)) expect(events(w)).not.toContain('running');
    expect(await recordOf(key)).toEqual({
      by: ['a', 'b', 'c'][started.indexOf(runner)],
      startedAt: expect.any(String),
      endedAt: expect.any(String),
      durationMs: expect.any(Number),
      outcome: 'done',
      runId: expect.any(String),
    });
    expect((await fx.nodes(key)) ?? []).toEqual([]); // no lock node left behind
  });

  it('kill -9 of the runner mid-run: another runs it; a process started later resolves false at once', async () => {
    const key = 'seed';
    const started = ['a', 'b'].map((by) => instance(by, key, 2000));
    const runner = await runnerAmong(started);
    const [waiter] = started.filter((w) => w !== runner);
    await fx.queued(key, 2);
    await runner.kill();
    // The dead runner's session expires, its lock node goes, and the waiter runs the step itself.
    await waiter.line(isEvent('running'), 'running', 30_000);
    expect(await recordOf(key)).toBeNull();
    waiter.signal('SIGUSR2');
    expect(parse(await waiter.line(isEvent('resolved'), 'resolved')).ran).toBe(true);
    expect(await recordOf(key)).toMatchObject({ by: ['a', 'b'][started.indexOf(waiter)], outcome: 'done' });

    const later = instance('later', key);
    expect(parse(await later.line(isEvent('resolved'), 'resolved', 30_000)).ran).toBe(false);
    expect(events(later)).toEqual(['connected', 'resolved']);
  });

  it.each(['before', 'after'] as const)(
    "a runner whose lock node is deleted under it (release --force), its step ending %s the next runner's: its completion is refused, one true",
    async (order) => {
      const key = `forced-${order}`;
      const started = ['a', 'b'].map((by) => instance(by, key));
      const runner = await runnerAmong(started);
      const [waiter] = started.filter((w) => w !== runner);
      await fx.queued(key, 2);
      const [holder] = await observer.contenders(key);
      // An operator's last resort: the runner is not told, its session lives on.
      expect(await observer.forceRelease(key)).toEqual([holder.node]);
      await waiter.line(isEvent('running'), 'running', 30_000);

      // The runner's step ends, its handle unaware: its write meets no node of its own.
      const runnerEnds = async (): Promise<void> => {
        runner.signal('SIGUSR2');
        const end = parse(await runner.line((line) => ['resolved', 'failed'].includes(parse(line).event), 'its end'));
        expect(end).toMatchObject({ event: 'failed', error: 'LockLostError' });
      };
      if (order === 'before') {
        await runnerEnds();
        expect(await recordOf(key)).toBeNull();
      }
      waiter.signal('SIGUSR2');
      expect(parse(await waiter.line(isEvent('resolved'), 'resolved')).ran).toBe(true);
      const record = await recordOf(key);
      expect(record).toMatchObject({ by: ['a', 'b'][started.indexOf(waiter)], outcome: 'done' });
      if (order === 'after') await runnerEnds();
      expect(await recordOf(key)).toEqual(record); // the waiter's completion, untouched
      expect((await fx.nodes(key)) ?? []).toEqual([]);
    },
  );
});
