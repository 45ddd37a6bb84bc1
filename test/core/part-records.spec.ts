import * as zookeeper from 'node-zookeeper-client';

import { Partitioner, type ZkLockBackend } from '../../lib/index';
import { encodeLockName } from '../../lib/core/naming/lock-name-codec';
import { heldNode } from '../../lib/core/port/lock-backend';
import { writeWhileHolding } from '../../lib/core/util/write-while-holding';
import { closeRawClient, openRawClient } from '../harness/raw-client';
import { LockFixture } from '../support/lock-fixture';
import { waitUntil } from '../support/wait-until';

const PARTS = 4;

/** The record each part's owner writes at its grant, for `partitions <group>` to show the fencing token. */
describe("a part's record (node and fencing token of its owner), on ZooKeeper", () => {
  let fx: LockFixture;
  let clients: ZkLockBackend[];
  beforeAll(async () => {
    fx = await LockFixture.create('part-records');
    clients = await Promise.all(['rec-a', 'rec-b'].map((identity) => fx.backend({ identity })));
  });
  afterAll(() => fx.cleanup());

  it('is written once per grant and never at idle: its version counts the grants; it names the holder and its token', async () => {
    const grants = new Map<number, number>();
    const members = clients.map((client, i) => {
      const member: Partitioner<number> = new Partitioner(client, 'ledger', { partitions: PARTS, memberId: `m${i}` });
      member.onChange(({ assigned }) => assigned.forEach((part) => grants.set(part, (grants.get(part) ?? 0) + 1)));
      return member;
    });
    const records = async (): Promise<void> => {
      for (let part = 0; part < PARTS; part++) {
        const [holder] = await clients[0].contenders(`partition:ledger/${part}`);
        const owner = members.find((m) => m.owned().includes(part))!;
        await waitUntil(
          async () => (await clients[0].readRecord(`partition:ledger/${part}`))?.data.node === holder.node,
          `part ${part}'s record names its holder`,
        );
        const record = (await clients[0].readRecord(`partition:ledger/${part}`))!;
        expect(record.data).toEqual({
          node: holder.node,
          token: owner.handle(part)!.fencingToken.toString(),
          member: owner.memberId,
        });
        expect([part, record.version]).toEqual([part, grants.get(part)! - 1]); // created at the first grant (version 0)
      }
    };
    try {
      await members[0].start();
      await waitUntil(() => members[0].owned().length === PARTS, 'm0 owns every part');
      await records();
      await members[1].start();
      await waitUntil(() => members.every((m) => m.owned().length === PARTS / 2), 'two parts each');
      await records();
      await members[1].stop();
      await waitUntil(() => members[0].owned().length === PARTS, 'm0 owns every part again');
      await records();
      expect([...grants.values()].sort()).toEqual([1, 1, 3, 3]); // two parts moved to m1 and back
    } finally {
      await Promise.all(members.map((m) => m.stop()));
    }
  });

  it('cannot be written by an owner whose lock is gone: a late write lands nowhere', async () => {
    const [client] = clients;
    const old = await client.acquire('partition:stale/0');
    const record = { node: heldNode(old)!, token: old.fencingToken.toString(), member: 'old' };
    expect(await writeWhileHolding(client, 'partition:stale/0', record, old, () => true)).toBe(true);
    await old.release();
    const next = await clients[1].acquire('partition:stale/0');
    try {
      const fresh = { node: heldNode(next)!, token: next.fencingToken.toString(), member: 'next' };
      expect(await writeWhileHolding(clients[1], 'partition:stale/0', fresh, next, () => true)).toBe(true);
      // The old owner's late write (its node deleted): refused by ZooKeeper, the record unchanged.
      expect(await writeWhileHolding(client, 'partition:stale/0', record, old, () => true)).toBe(false);
      expect(await client.readRecord('partition:stale/0')).toMatchObject({ data: fresh, version: 1 });
      // Given up, unwritten, once `holding()` says the ownership ended.
      expect(
        await writeWhileHolding(clients[1], 'partition:stale/0', { ...fresh, member: 'x' }, next, () => false),
      ).toBe(false);
      expect(await client.readRecord('partition:stale/0')).toMatchObject({ data: fresh, version: 1 });
    } finally {
      await next.release();
    }
  });

  it('refused by ZooKeeper (an ACL): reported as a warning naming the part; the part is owned all the same', async () => {
    const raw = await openRawClient(fx.connectionString);
    const path = `${fx.rootPath}-records/${encodeLockName('partition:acl/0')}`;
    const anyone = new zookeeper.Id('world', 'anyone');
    const setAcl = (acls: zookeeper.ACL[]): Promise<void> =>
      new Promise((resolve, reject) =>
        raw.client.setACL(path, acls, -1, (error) => (error ? reject(error) : resolve())),
      );
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const member = (id: string): Partitioner<number> =>
      new Partitioner(clients[0], 'acl', { partitions: 1, memberId: id });
    const first = member('first');
    const second = member('second');
    try {
      await first.start();
      await waitUntil(
        async () => (await clients[0].readRecord('partition:acl/0'))?.data.member === 'first',
        'the first record',
      );
      await first.stop();
      // Nobody may write the record now: the next owner's write is refused with NO_AUTH.
      await setAcl([new zookeeper.ACL(zookeeper.Permission.READ, anyone)]);
      await second.start();
      await waitUntil(() => warn.mock.calls.length > 0, 'the warning');
      expect(warn.mock.calls).toEqual([
        [
          expect.stringMatching(
            /^The record of part "0" of group "acl" could not be written \(.*NO_AUTH.*\); this member owns the part/,
          ),
          { code: 'NESTJS_ZK_LOCK_RECORD' },
        ],
      ]);
      expect(second.owned()).toEqual([0]);
      expect(await clients[0].readRecord('partition:acl/0')).toMatchObject({ data: { member: 'first' }, version: 0 });
    } finally {
      warn.mockRestore();
      await Promise.all([first.stop(), second.stop()]);
      await setAcl([new zookeeper.ACL(zookeeper.Permission.ALL, anyone)]).catch(() => undefined);
      await closeRawClient(raw.client);
    }
  });
});
