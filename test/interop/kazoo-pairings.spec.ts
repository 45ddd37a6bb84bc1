import type { ZkLockBackend, ZkLockHandle } from '../../lib/index';
import { LockFixture, nodeOf } from '../support/lock-fixture';
import { waitUntil } from '../support/wait-until';
import { watchedPaths } from '../support/watches';
import { zkConnect, zkPort } from '../support/zk-test-env';
import { KazooClient } from './kazoo-client';

/**
 * Every pairing of our modes with Kazoo 2.8's lock classes, in both orders. What each
 * Kazoo class counts as a blocker (kazoo/recipe/lock.py, `_EXCLUDE_NAMES`):
 *   Lock      -> only `__lock__` nodes (it does not see `__rlock__`, so not our readers)
 *   WriteLock -> `__lock__` and `__rlock__` nodes
 *   ReadLock  -> `__lock__` nodes
 * Our side counts both: a writer is blocked by any lower node, a reader by a lower `__lock__`.
 */
type Ours = 'read' | 'write';
type Kind = 'Lock' | 'ReadLock' | 'WriteLock'; // Kazoo's classes
/** excludes: refused at once, granted after the release; shares: both hold; UNSAFE: both hold though one is a writer. */
type Outcome = 'excludes' | 'shares' | 'UNSAFE: both hold';

/** The worker's name for each class. */
const KIND: Record<Kind, string> = { Lock: 'lock', ReadLock: 'read', WriteLock: 'write' };
/** How our side reads a Kazoo class's node: `__lock__` is a writer, `__rlock__` a reader. */
const MODE_OF: Record<Kind, Ours> = { Lock: 'write', ReadLock: 'read', WriteLock: 'write' };
const nodeName = (mode: Ours): RegExp => new RegExp(`^[0-9a-f]{32}__${mode === 'read' ? 'r' : ''}lock__\\d{10}$`);

/** Our lock holds first, then a Kazoo class tries. */
const OURS_FIRST: Array<[Ours, Kind, Outcome]> = [
  ['write', 'Lock', 'excludes'],
  ['write', 'ReadLock', 'excludes'],
  ['write', 'WriteLock', 'excludes'],
  ['read', 'Lock', 'UNSAFE: both hold'], // Kazoo's Lock ignores `__rlock__`: granted beside our reader
  ['read', 'ReadLock', 'shares'],
  ['read', 'WriteLock', 'excludes'],
];
/** A Kazoo class holds first, then our lock tries. */
const KAZOO_FIRST: Array<[Kind, Ours, Outcome]> = [
  ['Lock', 'write', 'excludes'],
  ['Lock', 'read', 'excludes'], // safe in this order only: our reader sees Kazoo's `__lock__`
  ['ReadLock', 'write', 'excludes'],
  ['ReadLock', 'read', 'shares'],
  ['WriteLock', 'write', 'excludes'],
  ['WriteLock', 'read', 'excludes'],
];

/** One side of a pairing, with the same calls for both libraries. */
interface Party {
  readonly label: string;
  /** The mode our `contenders()` reports for this party's node. */
  readonly mode: Ours;
  readonly identity: string;
  /** Non-blocking try: the node it holds, or `null` when refused. */
  tryTake(): Promise<string | null>;
  /** Blocking acquire (10 s at most): the node it holds. */
  take(): Promise<string>;
  /** False once the party knows its lock is lost (ours only; Kazoo's is checked by its node). */
  intact(): boolean;
  release(): Promise<void>;
}

describe('Kazoo interop: every pairing of our modes with Kazoo Lock, ReadLock and WriteLock', () => {
  let fx: LockFixture;
  let kazoo: KazooClient;
  let observer: KazooClient; // answers contenders() while `kazoo` is blocked in acquire()
  let backend: ZkLockBackend;
  beforeAll(async () => {
    fx = await LockFixture.create('kazoo-pairs');
    // Kazoo creates its directory once and fails with NoNodeError if it vanishes.
    backend = await fx.backend({ removeEmptyDirectories: false, identity: 'node-service' });
    [kazoo, observer] = await Promise.all([KazooClient.start(zkConnect()), KazooClient.start(zkConnect())]);
  });
  afterAll(async () => {
    await Promise.all([kazoo?.stop(), observer?.stop()]);
    await fx.cleanup();
  });

  const ours = (mode: Ours, name: string): Party => {
    let handle: ZkLockHandle | null = null;
    const keep = (h: ZkLockHandle | null): string | null => {
      handle = h;
      return h ? nodeOf(h) : null;
    };
    return {
      label: `our ${mode} lock`,
      mode,
      identity: 'node-service',
      tryTake: async () => keep(await backend.tryAcquire(name, { mode })),
      take: async () => keep(await backend.acquire(name, { mode, timeoutMs: 10_000 }))!,
      intact: () => handle !== null && !handle.signal.aborted && !handle.released,
      release: () => handle!.release(),
    };
  };

  const theirs = (kind: Kind, name: string): Party => {
    const path = backend.pathOf(name);
    const acquire = async (blocking: boolean): Promise<string | null> => {
      const reply = await kazoo.send({
        op: 'acquire',
        kind: KIND[kind],
        path,
        blocking,
        timeout: blocking ? 10 : null,
      });
      return reply.acquired ? (reply.node as string) : null;
    };
    return {
      label: `Kazoo ${kind}`,
      mode: MODE_OF[kind],
      identity: 'kazoo-worker',
      tryTake: () => acquire(false),
      take: async () => (await acquire(true))!,
      intact: () => true,
      release: async () => void (await kazoo.send({ op: 'release', path })),
    };
  };

  /** Sessions watching `node` in `name`'s directory, from ZooKeeper's watch table. */
  const watchers = async (name: string, node: string): Promise<number> => {
    const path = `${backend.pathOf(name)}/${node}`;
    return (await watchedPaths(zkPort(), path)).get(path) ?? 0;
  };

  /** Our `contenders()` as [mode, holding, identity], in queue order. */
  const ourView = async (name: string): Promise<Array<[string, boolean, string | null]>> =>
    (await backend.contenders(name)).map((c) => [c.mode, c.holding, c.identity]);

  /** Kazoo's `contenders()` for `kind`: only the nodes that class looks at. */
  const kazooView = async (kind: Kind, name: string): Promise<string[]> =>
    (await observer.send({ op: 'contenders', kind: KIND[kind], path: backend.pathOf(name) })).contenders;

  async function play(
    name: string,
    first: Party,
    second: Party,
    kind: Kind,
    ourMode: Ours,
    outcome: Outcome,
  ): Promise<void> {
    const held = await first.tryTake();
    expect(held).toMatch(nodeName(first.mode));
    expect(await fx.nodes(name)).toEqual([held]);

    const tried = await second.tryTake();
    // Kazoo's class sees every node but ours when it is a Lock and ours is a reader.
    const kazooSeesUs = !(kind === 'Lock' && ourMode === 'read');
    const both = [first.identity, second.identity];
    if (outcome === 'excludes') {
      expect(tried).toBeNull();
      expect(await fx.nodes(name)).toEqual([held]); // the refused try left no node...
      expect(await watchers(name, held!)).toBe(0); // ...and no watch

      let released = false;
      const waiting = second.take().then((node) => ({ node, afterRelease: released }));
      await fx.queued(name, 2);
      await waitUntil(
        async () => (await watchers(name, held!)) === 1,
        `${second.label} waits on ${first.label}'s node`,
      );
      expect(await ourView(name)).toEqual([
        [first.mode, true, first.identity],
        [second.mode, false, second.identity],
      ]);
      expect(await kazooView(kind, name)).toEqual(kazooSeesUs ? both : ['kazoo-worker']);
      expect(first.intact()).toBe(true);

      released = true;
      await first.release();
      const { node, afterRelease } = await waiting;
      expect(afterRelease).toBe(true); // granted only once the first party let go
      expect(node).toMatch(nodeName(second.mode));
      expect(await fx.nodes(name)).toEqual([node]);
      expect(second.intact()).toBe(true);
      await second.release();
    } else {
      // Granted at once while the first party still holds: two holders.
      expect(tried).toMatch(nodeName(second.mode));
      expect(await fx.nodes(name)).toEqual([held, tried].sort());
      expect(first.intact() && second.intact()).toBe(true);
      // Our view follows our rules: a Kazoo Lock node after our reader looks like a waiting
      // writer, though Kazoo granted it; Kazoo's Lock does not list our reader at all.
      expect(await ourView(name)).toEqual([
        [first.mode, true, first.identity],
        [second.mode, outcome === 'shares', second.identity],
      ]);
      expect(await kazooView(kind, name)).toEqual(kazooSeesUs ? both : ['kazoo-worker']);
      await second.release();
      await first.release();
    }
    expect(await fx.nodes(name)).toEqual([]); // nothing left behind; the directory stays for Kazoo
  }

  it.each(OURS_FIRST)('our %s lock holds, a Kazoo %s tries: %s', async (mode, kind, outcome) => {
    const name = `ours-${mode}-then-kazoo-${kind}`;
    await play(name, ours(mode, name), theirs(kind, name), kind, mode, outcome);
  });

  it.each(KAZOO_FIRST)('a Kazoo %s holds, our %s lock tries: %s', async (kind, mode, outcome) => {
    const name = `kazoo-${kind}-then-ours-${mode}`;
    await play(name, theirs(kind, name), ours(mode, name), kind, mode, outcome);
  });
});
