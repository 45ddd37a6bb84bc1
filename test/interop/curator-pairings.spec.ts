import type { LockMode, NodeFormat, ZkLockBackend, ZkLockHandle } from '../../lib/index';
import { LockFixture, nodeOf } from '../support/lock-fixture';
import { NODE_NAME } from '../support/node-names';
import { waitUntil } from '../support/wait-until';
import { watchedPaths } from '../support/watches';
import { zkConnect, zkPort } from '../support/zk-test-env';
import { CuratorClient, type CuratorLockKind } from './curator-client';

/**
 * Every pairing of our node formats and modes with Apache Curator 5's lock classes
 * (Debian's libcurator-recipes-java), in both orders, on one path.
 *
 * Our side reads every format: whatever it writes, it waits behind any holder. Curator
 * sees only its own names: InterProcessMutex orders the children by the text after
 * `lock-`, and InterProcessReadWriteLock by the text after `__READ__`/`__WRIT__`; any
 * other name is compared whole and sorts after every sequence number, so Curator takes
 * the lock beside it. Hence: `curator-mutex` for locks shared with InterProcessMutex,
 * `curator-rw` for locks shared with InterProcessReadWriteLock.
 */
type Kind = 'InterProcessMutex' | 'ReadLock' | 'WriteLock';
type Ours = [NodeFormat, LockMode];
type Outcome = 'excludes' | 'shares' | 'UNSAFE: both hold';

const KIND: Record<Kind, CuratorLockKind> = { InterProcessMutex: 'mutex', ReadLock: 'read', WriteLock: 'write' };
const MODE_OF: Record<Kind, LockMode> = { InterProcessMutex: 'write', ReadLock: 'read', WriteLock: 'write' };
const CURATOR_NAME: Record<Kind, string> = {
  InterProcessMutex: 'curator-mutex/write',
  ReadLock: 'curator-rw/read',
  WriteLock: 'curator-rw/write',
};

const OURS: Ours[] = [
  ['kazoo', 'write'],
  ['kazoo', 'read'],
  ['curator-mutex', 'write'],
  ['curator-rw', 'write'],
  ['curator-rw', 'read'],
];

/** What Curator's class does when our node holds first: it sees our node only in its own format. */
function curatorSecond([format, mode]: Ours, kind: Kind): Outcome {
  const seen = kind === 'InterProcessMutex' ? format === 'curator-mutex' : format === 'curator-rw';
  const bothRead = mode === 'read' && kind === 'ReadLock';
  if (bothRead) return 'shares';
  return seen ? 'excludes' : 'UNSAFE: both hold';
}

/** What our call does when Curator's node holds first: we read every format. */
function oursSecond(kind: Kind, [, mode]: Ours): Outcome {
  return mode === 'read' && kind === 'ReadLock' ? 'shares' : 'excludes';
}

const KINDS: Kind[] = ['InterProcessMutex', 'ReadLock', 'WriteLock'];
const OURS_FIRST = OURS.flatMap((ours) =>
  KINDS.map((kind): [string, string, Kind, Outcome, Ours] => [
    ours.join(' '),
    kind,
    kind,
    curatorSecond(ours, kind),
    ours,
  ]),
);
const CURATOR_FIRST = OURS.flatMap((ours) =>
  KINDS.map((kind): [string, string, Kind, Outcome, Ours] => [
    kind,
    ours.join(' '),
    kind,
    oursSecond(kind, ours),
    ours,
  ]),
);

interface Party {
  readonly label: string;
  readonly mode: LockMode;
  /** `format/mode`: which node name it makes. */
  readonly naming: string;
  tryTake(): Promise<boolean>;
  /** Blocking acquire (10 s at most). */
  take(): Promise<void>;
  release(): Promise<void>;
  /** Its node, once it holds. */
  node(): Promise<string>;
}

describe('Curator interop: every pairing of our node formats with InterProcessMutex and InterProcessReadWriteLock', () => {
  let fx: LockFixture;
  let curator: CuratorClient;
  let backend: ZkLockBackend;
  let slots = 0;
  beforeAll(async () => {
    fx = await LockFixture.create('curator-pairs');
    backend = await fx.backend({ identity: 'node-service' });
    curator = await CuratorClient.start(zkConnect());
  });
  afterAll(async () => {
    await curator?.stop();
    await fx.cleanup();
  });

  const ours = ([nodeFormat, mode]: Ours, name: string): Party => {
    let handle: ZkLockHandle | null = null;
    return {
      label: `our ${mode} lock (${nodeFormat})`,
      mode,
      naming: `${nodeFormat}/${mode}`,
      tryTake: async () => (handle = await backend.tryAcquire(name, { mode, nodeFormat })) !== null,
      take: async () => void (handle = await backend.acquire(name, { mode, nodeFormat, timeoutMs: 10_000 })),
      release: () => handle!.release(),
      node: async () => nodeOf(handle!),
    };
  };

  const theirs = async (kind: Kind, name: string): Promise<Party> => {
    const slot = `s${++slots}`;
    const path = backend.pathOf(name);
    await curator.lock(slot, kind === 'InterProcessMutex' ? 'mutex' : 'rw', path);
    return {
      label: `Curator ${kind}`,
      mode: MODE_OF[kind],
      naming: CURATOR_NAME[kind],
      tryTake: () => curator.acquire(slot, KIND[kind], 0),
      take: async () => void (await curator.acquire(slot, KIND[kind], 10_000)),
      release: () => curator.release(slot, KIND[kind]),
      node: async () => {
        // Curator's participants are every node of its kind, ours included when in its format: its own is the one without our identity.
        for (const participant of (await curator.send('participants', slot, KIND[kind])).nodes as string[]) {
          if ((await fx.inspector.data(participant)) !== 'node-service')
            return participant.slice(participant.lastIndexOf('/') + 1);
        }
        throw new Error(`${slot} holds no node`);
      },
    };
  };

  const watchers = async (name: string, node: string): Promise<number> => {
    const path = `${backend.pathOf(name)}/${node}`;
    return (await watchedPaths(zkPort(), path)).get(path) ?? 0;
  };

  async function play(name: string, first: Party, second: Party, outcome: Outcome): Promise<void> {
    expect(await first.tryTake()).toBe(true);
    const [held] = (await fx.nodes(name))!;
    expect(held).toMatch(NODE_NAME[first.naming]);

    const tried = await second.tryTake();
    if (outcome === 'excludes') {
      expect(tried).toBe(false);
      expect(await fx.nodes(name)).toEqual([held]); // the refused try left no node

      let released = false;
      const waiting = second.take().then(() => released);
      await fx.queued(name, 2);
      await waitUntil(async () => (await watchers(name, held)) === 1, `${second.label} waits on ${first.label}'s node`);
      expect((await backend.contenders(name)).map((c) => [c.mode, c.holding])).toEqual([
        [first.mode, true],
        [second.mode, false],
      ]);
      released = true;
      await first.release();
      expect(await waiting).toBe(true); // granted only once the first party let go
      const node = await second.node();
      expect(node).toMatch(NODE_NAME[second.naming]);
      expect(await fx.nodes(name)).toEqual([node]);
    } else {
      // Granted while the first still holds.
      expect(tried).toBe(true);
      const node = await second.node();
      expect(node).toMatch(NODE_NAME[second.naming]);
      expect((await fx.nodes(name))!.sort()).toEqual([held, node].sort());
      if (outcome === 'shares') expect(first.mode === 'read' && second.mode === 'read').toBe(true);
      await first.release();
    }
    await second.release();
    expect((await fx.nodes(name)) ?? []).toEqual([]); // nothing left behind
  }

  it.each(OURS_FIRST)('our %s holds, a Curator %s tries: %s', async (_ours, _kind, kind, outcome, ours_) => {
    const name = `ours-${ours_.join('-')}-then-${kind}`;
    await play(name, ours(ours_, name), await theirs(kind, name), outcome);
  });

  it.each(CURATOR_FIRST)('a Curator %s holds, our %s tries: %s', async (_kind, _ours, kind, outcome, ours_) => {
    const name = `${kind}-then-ours-${ours_.join('-')}`;
    await play(name, await theirs(kind, name), ours(ours_, name), outcome);
  });
});
