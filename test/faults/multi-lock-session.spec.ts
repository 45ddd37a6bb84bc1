import { LockTimeoutError, type ZkLockBackend, type ZkLockHandle } from '../../lib/index';
import { LockFixture, nodeOf } from '../support/lock-fixture';
import { waitUntil } from '../support/wait-until';

/**
 * A session that expires while acquireAll holds some locks and waits for another: the
 * locks it held died with the session, so it gives everything back and starts over in the
 * new session, within the same deadline. It never hands out a lock of the dead session.
 */
describe('acquireAll through a lost session', () => {
  let fx: LockFixture;
  let other: ZkLockBackend;
  let n = 0;
  const three = (): string[] => {
    n++;
    return [`s${n}-a`, `s${n}-b`, `s${n}-c`];
  };
  const counts = (names: string[]): Promise<number[]> =>
    Promise.all(names.map(async (name) => (await fx.nodes(name, other))?.length ?? 0));
  const same = (x: number[], y: number[]): boolean => JSON.stringify(x) === JSON.stringify(y);

  /** Waits until `client` waits for b (a watch on its holder), holding a and nothing on c. */
  const waitsForB = (client: ZkLockBackend, names: string[]): Promise<void> =>
    waitUntil(
      async () => client.client.session.watcherCount() === 1 && same(await counts(names), [1, 2, 0]),
      'the client to wait for b',
    );

  /**
   * A holder of `name` that is no client of this library, so that nothing can report it
   * lost: the expiry blocks this process's event loop (see expireSession), which may put
   * an in-process holder's session at risk.
   */
  const holdElsewhere = async (name: string): Promise<{ node: string; release(): Promise<void> }> => {
    const node = `${'0'.repeat(32)}__lock__0000000000`;
    const path = `${other.pathOf(name)}/${node}`;
    await fx.inspector.create(path);
    return { node, release: () => fx.inspector.removeTree(path) };
  };

  beforeAll(async () => {
    fx = await LockFixture.create('multi-session');
    other = await fx.backend();
  });
  afterAll(() => fx.cleanup());

  it('starts over in the new session and ends holding every lock, none of the dead session', async () => {
    const names = three();
    const [a, b, c] = names;
    const client = await fx.expirable();
    const blocker = await holdElsewhere(b);
    const pending = client.acquireAll([c, b, a], { timeoutMs: 20_000 });
    await waitsForB(client, names);
    const deadSession = client.client.session.id;
    const [deadNodeOnA] = (await fx.nodes(a, other))!;

    await fx.expire(client);
    // Queued again in a new session: a held, b waited for, nothing on c; the old nodes gone.
    await waitUntil(() => client.client.session.id !== deadSession, 'a new session');
    await waitsForB(client, names);
    expect(await fx.nodes(a, other)).not.toContain(deadNodeOnA);

    await blocker.release();
    const group = await pending;
    expect(group.isHeld()).toBe(true);
    expect(group.signal.aborted).toBe(false);
    for (const [i, name] of names.entries())
      expect(await fx.nodes(name, other)).toEqual([nodeOf(group.handles[i] as ZkLockHandle)]);
    await group.release();
    expect(await counts(names)).toEqual([0, 0, 0]);
  });

  it('a lost session and then the deadline: rejects with LockTimeoutError, leaving no node in either session', async () => {
    const names = three();
    const [, b] = names;
    const client = await fx.expirable();
    const blocker = await holdElsewhere(b);
    const pending = client.acquireAll(names, { timeoutMs: 2_500 }).catch((e: unknown) => e);
    await waitsForB(client, names);
    const deadSession = client.client.session.id;

    await fx.expire(client);
    await waitUntil(() => client.client.session.id !== deadSession, 'a new session');
    await waitsForB(client, names); // queued again, in the new session

    const error = await pending;
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect(error).toMatchObject({ lockName: b, timeoutMs: 2_500 });
    expect(await counts(names)).toEqual([0, 1, 0]); // right after the rejection
    expect(await fx.nodes(b, other)).toEqual([blocker.node]);
    expect(client.client.session.watcherCount()).toBe(0);
    await blocker.release();
  });
});
