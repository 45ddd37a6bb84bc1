import diagnostics from 'node:diagnostics_channel';

import { LOCK_CHANNELS, LockClientClosedError, type ZkLockBackend } from '../../lib/index';
import { LockFixture, nodeOf } from '../support/lock-fixture';
import { waitUntil } from '../support/wait-until';
import { watchedPaths } from '../support/watches';
import { zkPort } from '../support/zk-test-env';

const NEXT_MICROTASK = '(next microtask)';

/**
 * The requests `client` counts from now on, in order (heartbeats left out), and after each
 * notification the moment the tick that delivered it hands over to the promise chain: a
 * request logged before that marker left from the notification itself.
 */
function requestLog(client: ZkLockBackend): string[] {
  const log: string[] = [];
  const { counter } = client.client;
  const count = counter.count.bind(counter);
  counter.count = (op: string): void => {
    count(op);
    if (op === 'heartbeat') return;
    log.push(op);
    if (op === 'notification') queueMicrotask(() => log.push(NEXT_MICROTASK));
  };
  return log;
}

/** Waits until ZooKeeper's watch table shows one session watching `path`, and only that under `prefix`. */
async function watchedAlone(prefix: string, path: string): Promise<void> {
  await waitUntil(async () => {
    const watched = await watchedPaths(zkPort(), prefix);
    return watched.size === 1 && watched.get(path) === 1;
  }, `one watch, on ${path}`);
}

/** What a handoff puts on its critical path, on each side, against a real ZooKeeper. */
describe('the handoff path', () => {
  let fx: LockFixture;

  beforeAll(async () => {
    fx = await LockFixture.create('handoff-path');
  });
  afterAll(() => fx.cleanup());

  it("the waiter's read of the queue leaves in the tick that delivers the notification", async () => {
    const [holderClient, waiterClient] = await fx.many(2);
    const holder = await holderClient.acquire('hand');
    const waiting = waiterClient.acquire('hand');
    await fx.queued('hand', 2);
    await watchedAlone(fx.rootPath, holder.path); // the waiter watches the holder's node, and only that

    const log = requestLog(waiterClient);
    await holder.release();
    const lock = await waiting;

    // The read was sent from the notification, before any promise continuation ran, and
    // the grant came from it: nothing else was asked.
    expect(log).toEqual(['notification', 'getChildren', NEXT_MICROTASK]);
    expect(await fx.nodes('hand')).toEqual([nodeOf(lock)]);
    expect((await watchedPaths(zkPort(), fx.rootPath)).size).toBe(0);
    await lock.release();
  });

  it('a reader behind a writer reads the queue from the notification too', async () => {
    const [writerClient, readerClient] = await fx.many(2);
    const writer = await writerClient.acquire('rw');
    const reading = readerClient.acquire('rw', { mode: 'read' });
    await fx.queued('rw', 2);
    await watchedAlone(fx.rootPath, writer.path);

    const log = requestLog(readerClient);
    await writer.release();
    const read = await reading;

    expect(log).toEqual(['notification', 'getChildren', NEXT_MICROTASK]);
    expect(read.mode).toBe('read');
    expect(await fx.nodes('rw')).toEqual([nodeOf(read)]);
    await read.release();
  });

  it('a waiter cancelled while its woken read is in flight leaves nothing behind', async () => {
    const [holderClient, waiterClient] = await fx.many(2);
    const holder = await holderClient.acquire('late');
    const waiting = waiterClient.acquire('late', { timeoutMs: 60_000 });
    await fx.queued('late', 2);
    await watchedAlone(fx.rootPath, holder.path);
    // Stop the waiter from inside the notification, right as its read is sent: the stop
    // lands while that read is on the wire.
    const { counter } = waiterClient.client;
    const count = counter.count.bind(counter);
    let cancelled: Promise<void> | undefined;
    counter.count = (op: string): void => {
      count(op);
      if (op === 'getChildren' && !cancelled) cancelled = waiterClient.cancelWaits();
    };

    await holder.release();
    await expect(waiting).rejects.toBeInstanceOf(LockClientClosedError);
    await cancelled;
    // The waiter's node was deleted as it gave up, and the directory swept after it.
    expect(await fx.nodes('late')).toBeNull();
    expect((await watchedPaths(zkPort(), fx.rootPath)).size).toBe(0);
  });

  it("release sends its delete before anything else, even before the release's own diagnostics message", async () => {
    const client = await fx.backend();
    const lock = await client.acquire('first');
    const log = requestLog(client);
    const onRelease = (): void => void log.push('release message');
    diagnostics.subscribe(LOCK_CHANNELS.release, onRelease);
    try {
      await lock.release();
    } finally {
      diagnostics.unsubscribe(LOCK_CHANNELS.release, onRelease);
    }
    // The node's delete, then (no grace here) the directory's, then the message.
    expect(log).toEqual(['remove', 'remove', 'release message']);
    expect(await fx.nodes('first')).toBeNull();
  });
});
