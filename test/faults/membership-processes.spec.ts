import { once } from 'node:events';

import { GroupMembership, type MembershipChange, type ZkLockBackend } from '../../lib/index';
import { LockFixture } from '../support/lock-fixture';
import { waitUntil } from '../support/wait-until';
import { WorkerProcess } from '../support/worker-process';
import { TcpProxy, ZK_OP } from '../support/tcp-proxy';
import { zkConnect, zkPort } from '../support/zk-test-env';

// The test server runs with tickTime 200 ms, so sessions last 4 s at most.
const SESSION_MS = 4000;

interface MemberEvent {
  readonly t: number;
  readonly event: string;
  readonly [field: string]: unknown;
}

const parse = (line: string): MemberEvent => JSON.parse(line) as MemberEvent;
const isEvent = (event: string) => (line: string) => parse(line).event === event;

describe('group membership across processes: join, leave, crash, the same id again, a lost session', () => {
  let fx: LockFixture;
  let watcherBackend: ZkLockBackend;
  const workers: WorkerProcess[] = [];
  const memberships: GroupMembership[] = [];
  beforeAll(async () => {
    fx = await LockFixture.create('membership-processes');
    watcherBackend = await fx.backend();
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((worker) => worker.kill()));
    await Promise.all(memberships.splice(0).map((membership) => membership.leave()));
  });
  afterAll(() => fx.cleanup());

  const groupDir = (group: string): string => `${fx.rootPath}-groups/${group}`;

  /** A member process: connected, joined `group` as `memberId`; its session id, `0x…`. */
  async function memberProcess(group: string, memberId: string, data: Record<string, unknown> = {}) {
    const worker = WorkerProcess.spawn('member.worker.ts', {
      connectionString: zkConnect(),
      rootPath: fx.rootPath,
      sessionTimeoutMs: SESSION_MS,
      identity: `member-${memberId}`,
      group,
      memberId,
      data,
    });
    workers.push(worker);
    const session = parse(await worker.line(isEvent('session'), 'its session'));
    await worker.line(isEvent('joined'), 'joined');
    return { worker, session: `0x${String(session.id).padStart(16, '0')}` };
  }

  /** A watcher of `group` in this process (it never joins), with every change it was told. */
  async function watcherOf(group: string) {
    const membership = new GroupMembership(watcherBackend, group, { retryDelayMs: 50 });
    memberships.push(membership);
    const changes: MembershipChange[] = [];
    membership.onChange((change) => changes.push(change));
    await membership.watch();
    return { membership, changes };
  }

  const ids = (members: ReadonlyArray<{ id: string }>): string[] => members.map((member) => member.id);

  it('a member that leaves is gone at once; one killed with SIGKILL is gone once its session expires; every change told in order', async () => {
    const group = 'workers';
    const { membership, changes } = await watcherOf(group);
    const a = await memberProcess(group, 'a', { zone: 'eu-1' });
    const b = await memberProcess(group, 'b', { zone: 'eu-2' });
    await waitUntil(() => membership.members().length === 2, 'the watcher sees both');
    expect(membership.members().map(({ id, data, sessionId }) => ({ id, data, sessionId }))).toEqual([
      { id: 'a', data: { zone: 'eu-1' }, sessionId: a.session },
      { id: 'b', data: { zone: 'eu-2' }, sessionId: b.session },
    ]);
    // ZooKeeper's own state: an ephemeral node per member, owned by its process's session.
    expect(await fx.inspector.children(groupDir(group))).toEqual(['a', 'b']);
    expect(await fx.inspector.owner(`${groupDir(group)}/a`)).toBe(a.session);
    expect(JSON.parse((await fx.inspector.data(`${groupDir(group)}/b`))!)).toEqual({ zone: 'eu-2' });

    b.worker.signal('SIGTERM'); // a clean shutdown: leave, then close
    expect(await b.worker.exited).toEqual({ code: 0, signal: null });
    await waitUntil(() => ids(membership.members()).join() === 'a', 'the watcher sees b leave');
    expect(await fx.inspector.children(groupDir(group))).toEqual(['a']);

    await a.worker.kill(); // a crash: its node stays until ZooKeeper expires its session
    await waitUntil(() => membership.members().length === 0, 'the watcher sees a go with its session', 3 * SESSION_MS);
    expect(await fx.inspector.children(groupDir(group))).toEqual([]);
    expect(changes.map((change) => [ids(change.joined), ids(change.left), ids(change.members)])).toEqual([
      [['a'], [], ['a']],
      [['b'], [], ['a', 'b']],
      [[], ['b'], ['a']],
      [[], ['a'], []],
    ]);
  });

  it('joining with an id already there takes it over in one transaction, the old entry alive or crashed; the live one replaced is told', async () => {
    const group = 'static';
    const { membership, changes } = await watcherOf(group);
    const first = await memberProcess(group, 'static-1', { run: 1 });
    await first.worker.kill();
    // Joined while the crashed session still lives: the join takes the id over (one transaction).
    const second = await memberProcess(group, 'static-1', { run: 2 });
    expect(await fx.inspector.owner(`${groupDir(group)}/static-1`)).toBe(second.session);
    expect(JSON.parse((await fx.inspector.data(`${groupDir(group)}/static-1`))!)).toEqual({ run: 2 });
    await waitUntil(() => membership.members()[0]?.sessionId === second.session, 'the watcher sees the new entry');
    expect(changes.flatMap((change) => ids(change.left))).toEqual([]); // never seen vacant

    // A live member whose id is taken is told, and does not take it back.
    const third = await memberProcess(group, 'static-1', { run: 3 });
    const replaced = parse(await second.worker.line(isEvent('replaced'), 'replaced'));
    expect(replaced.code).toBe('MEMBER_REPLACED');
    await waitUntil(() => membership.members()[0]?.sessionId === third.session, 'the watcher sees the third entry');
    expect(await fx.inspector.owner(`${groupDir(group)}/static-1`)).toBe(third.session);
    expect(ids(membership.members())).toEqual(['static-1']);
    expect(changes.some((change) => ids(change.rejoined).includes('static-1'))).toBe(true);
  });

  it('a member whose session expires is made again on its next session, with its data', async () => {
    const group = 'expiring';
    const backend = await fx.expirable();
    const member = new GroupMembership(backend, group, { memberId: 'm', data: { v: 1 } });
    memberships.push(member);
    await member.join();
    const path = `${groupDir(group)}/m`;
    const before = await fx.inspector.owner(path);
    expect(before).toBe(`0x${backend.client.session.id}`);
    await fx.expire(backend);
    await waitUntil(async () => {
      const owner = await fx.inspector.owner(path);
      return owner !== null && owner !== before;
    }, 'the entry is made again by the new session');
    expect(await fx.inspector.owner(path)).toBe(`0x${backend.client.session.id}`);
    expect(JSON.parse((await fx.inspector.data(path))!)).toEqual({ v: 1 });
    expect(member.isMember).toBe(true);
    await member.leave();
    expect(await fx.inspector.exists(path)).toBe(false);
  });

  it('a session the client presumed lost and got back keeps the member node: never deleted, the same owner', async () => {
    const group = 'given-back';
    const proxy = new TcpProxy(zkPort());
    await proxy.start();
    try {
      const backend = await fx.backend({ connectionString: proxy.connectionString, sessionTimeoutMs: SESSION_MS });
      const member = new GroupMembership(backend, group, { memberId: 'kept' });
      memberships.push(member);
      await member.join();
      const path = `${groupDir(group)}/kept`;
      const owner = `0x${backend.client.session.id}`;
      // An idle session is never presumed lost (nothing needs its proof; it reconnects): a held lock makes it count.
      const held = await backend.acquire('busy');
      // The server hears the client but no answer comes back: the client declares the session
      // lost, then asks for it back, and the server (which kept it) gives it back.
      proxy.holdReplies();
      await once(backend.client, 'session-lost');
      const healedAt = proxy.requests.length;
      proxy.releaseReplies();
      await backend.client.session.whenConnected();
      expect(`0x${backend.client.session.id}`).toBe(owner);
      await backend.groupMembers(group); // a read on the session given back: everything before it is done
      expect(await fx.inspector.owner(path)).toBe(owner);
      expect(proxy.requests.slice(healedAt).some((r) => r.op === ZK_OP.delete && r.path === path)).toBe(false);
      expect(member.isMember).toBe(true);
      await held.release();
      await member.leave();
      expect(await fx.inspector.exists(path)).toBe(false);
    } finally {
      await proxy.stop();
    }
  });
});
