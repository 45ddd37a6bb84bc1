import { WorkerProcess } from '../support/worker-process';
import { uniqueRoot, zkConnect } from '../support/zk-test-env';
import { ZkInspector } from '../support/zookeeper/zk-inspector';

/** One line of holder.worker.ts's stdout. */
interface HolderEvent {
  /** Date.now() in the worker: one clock for every process on this machine. */
  t: number;
  event: string;
  [field: string]: unknown;
}

const parse = (line: string): HolderEvent => JSON.parse(line) as HolderEvent;
const isEvent = (event: string) => (line: string) => parse(line).event === event;

const MAX_HOLD_MS = 1_000;

describe('maxHoldMs across processes', () => {
  const rootPath = uniqueRoot('max-hold-processes');
  const workers: WorkerProcess[] = [];
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.kill()));
    const inspector = await ZkInspector.connect(zkConnect());
    await inspector.removeTree(rootPath);
    await inspector.close();
  });

  const holder = (maxHoldMs?: number, group?: string[]): WorkerProcess => {
    const worker = WorkerProcess.spawn('holder.worker.ts', {
      connectionString: zkConnect(),
      rootPath,
      name: 'nightly',
      sessionTimeoutMs: 10_000,
      maxHoldMs,
      group,
    });
    workers.push(worker);
    return worker;
  };

  it('a process that hangs holding the lock past maxHoldMs is told; only then is the other process granted', async () => {
    const hung = holder(MAX_HOLD_MS);
    const heldAt = parse(await hung.line(isEvent('held'), 'the first holder')).t;
    const next = holder(); // queues behind the hung holder, which never releases
    const granted = parse(await next.line(isEvent('held'), 'the second holder, after maxHoldMs', 20_000));
    const told = parse(await hung.line(isEvent('aborted'), 'the hung holder told'));
    expect(told.error).toBe('LockLostError');
    expect(told.message).toContain(`maxHoldMs (${MAX_HOLD_MS} ms)`);
    // One clock (Date.now() of one machine), in ms: the holder heard no later than the grant.
    expect(told.t).toBeLessThanOrEqual(granted.t);
    expect(granted.t - heldAt).toBeGreaterThanOrEqual(MAX_HOLD_MS);
    expect(hung.running).toBe(true); // alive and connected all along: only maxHoldMs freed the lock
    expect(hung.lines.some(isEvent('session-lost'))).toBe(false);
  });

  it('a process that hangs holding a group past maxHoldMs is told; only then is another process granted the group', async () => {
    const group = ['batch:a', 'batch:b'];
    const hung = holder(MAX_HOLD_MS, group);
    const heldAt = parse(await hung.line(isEvent('held'), 'the group held')).t;
    const next = holder(undefined, group);
    const granted = parse(await next.line(isEvent('held'), 'the second group, after maxHoldMs', 20_000));
    const told = parse(await hung.line(isEvent('aborted'), 'the hung holder told'));
    expect(told.error).toBe('LockLostError');
    expect(told.message).toContain(`maxHoldMs (${MAX_HOLD_MS} ms)`);
    expect(told.t).toBeLessThanOrEqual(granted.t);
    expect(granted.t - heldAt).toBeGreaterThanOrEqual(MAX_HOLD_MS);
    expect(hung.running).toBe(true);
    expect(hung.lines.some(isEvent('session-lost'))).toBe(false);
  });
});
