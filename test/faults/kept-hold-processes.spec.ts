import { setTimeout as sleep } from 'node:timers/promises';

import { ReentrantLocker, type LockSkippedEvent } from '../../lib/index';
import { LockFixture } from '../support/lock-fixture';
import { KEPT_HOLD_MARKER } from '../support/node-names';
import { waitUntil } from '../support/wait-until';
import { WorkerProcess } from '../support/worker-process';
import { zkConnect } from '../support/zk-test-env';

/** One line of job.worker.ts's stdout. */
interface JobEvent {
  /** Date.now() in the worker: the same clock as this process's (and ZooKeeper's, on this machine). */
  t: number;
  event: 'ran' | 'resolved' | 'closed';
}

const parse = (line: string): JobEvent => JSON.parse(line) as JobEvent;
const isEvent = (event: JobEvent['event']) => (line: string) => parse(line).event === event;
const sleepUntil = (t: number): Promise<void> => sleep(Math.max(0, t - Date.now()));

const HOLD_MS = 4_000;
/** Longer than the hold: a lock node left to the session would keep the next tick out past the hold. */
const SESSION_TIMEOUT_MS = 10_000;

describe('holdAtLeastMs kept in ZooKeeper: the hold outlives the instance that ran the job', () => {
  let fx: LockFixture;
  const workers: WorkerProcess[] = [];
  beforeAll(async () => {
    fx = await LockFixture.create('kept-hold-processes');
    await fx.backend(); // the observer fx.nodes reads through
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.kill()));
  });
  afterAll(() => fx.cleanup());

  const job = (name: string): WorkerProcess => {
    const worker = WorkerProcess.spawn('job.worker.ts', {
      connectionString: zkConnect(),
      rootPath: fx.rootPath,
      name,
      sessionTimeoutMs: SESSION_TIMEOUT_MS,
      holdAtLeastMs: HOLD_MS,
    });
    workers.push(worker);
    return worker;
  };

  const recordOf = async (name: string): Promise<unknown> => {
    const json = await fx.inspector.data(`${fx.rootPath}-records/job%2F${encodeURIComponent(name)}`);
    return json === null ? null : JSON.parse(json);
  };

  it.each([
    ['close()', async (w: WorkerProcess) => (w.signal('SIGTERM'), await w.line(isEvent('closed'), 'closed'))],
    [`kill -9 (${SESSION_TIMEOUT_MS / 1000} s session)`, (w: WorkerProcess) => w.kill()],
  ])(
    '%s 300 ms into a 4 s hold: another instance skips at +1.2 s (a job call, a plain call, a try) and runs after +4 s',
    async (label, end) => {
      const name = `tick-${label.split(' ')[0].replace(/\W/g, '')}`;
      const first = job(name);
      const ranAt = parse(await first.line(isEvent('ran'), 'the first tick ran', 20_000)).t;
      await first.line(isEvent('resolved'), 'the first tick resolved');
      await sleepUntil(ranAt + 300);
      await end(first);

      // What ZooKeeper keeps: no lock node but the kept hold's marker (the one a closed holder
      // leaves for the time left, or the dead one's, until ZooKeeper ends its session), and
      // the job's record with the hold left after its write.
      const [marker, ...lockNodes] = (await fx.nodes(name)) ?? [];
      expect([marker, lockNodes]).toEqual([expect.stringMatching(KEPT_HOLD_MARKER), []]);
      const record = (await recordOf(name)) as { hold: { afterWriteMs: number } };
      expect(record).toEqual({
        hold: { afterWriteMs: expect.any(Number) },
        runs: [
          {
            id: expect.any(String),
            by: expect.stringMatching(/:\d+$/),
            identity: expect.any(String),
            outcome: 'ok',
            tookMs: expect.any(Number),
          },
        ],
      });
      expect(record.hold.afterWriteMs).toBeGreaterThan(0);
      expect(record.hold.afterWriteMs).toBeLessThanOrEqual(HOLD_MS);

      const skipped: LockSkippedEvent[] = [];
      const locker = new ReentrantLocker(await fx.backend(), 10_000, { skipped: (e) => skipped.push(e) });
      const tick = (): Promise<number | undefined> =>
        locker.withLock(name, () => Date.now(), { ifLocked: 'skip', holdAtLeastMs: HOLD_MS });
      await sleepUntil(ranAt + 1_200);
      await expect(tick()).resolves.toBeUndefined();
      expect(skipped[0]).toEqual({ name, mode: 'write', reason: 'held' });
      // Calls that are not jobs honour the hold too.
      const backend = await fx.backend();
      expect(await backend.tryAcquire(name)).toBeNull();
      expect(await locker.withLock(name, () => 'plain', { ifLocked: 'skip' })).toBeUndefined();
      expect(await fx.nodes(name)).toEqual([marker]); // the skips left no node either
      const plainAt = await locker.withLock(name, () => Date.now(), { timeoutMs: 15_000 });
      expect(plainAt).toBeGreaterThanOrEqual(ranAt + HOLD_MS);
      expect(plainAt).toBeLessThan(ranAt + SESSION_TIMEOUT_MS - 2_000); // not freed by the session's end

      let ranAgainAt: number | undefined;
      await waitUntil(async () => (ranAgainAt = await tick()) !== undefined, 'the next tick runs', 15_000);
      expect(ranAgainAt).toBeGreaterThanOrEqual(ranAt + HOLD_MS);
      expect(ranAgainAt).toBeLessThan(ranAt + SESSION_TIMEOUT_MS - 2_000); // not freed by the session's end
    },
  );
});
