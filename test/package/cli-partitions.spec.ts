import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { encodeLockName, Partitioner, ZkLockBackend } from '../../lib/index';
import { ensureBuilt } from '../support/fixture-app';
import { waitUntil } from '../support/wait-until';
import { uniqueRoot, zkConnect } from '../support/zk-test-env';
import { ZkInspector } from '../support/zookeeper/zk-inspector';

const ROOT = join(__dirname, '..', '..');
const BIN = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).bin['nestjs-zk-lock'] as string;

/** The built bin, as `npx nestjs-zk-lock` runs it. */
function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(ROOT, BIN), ...args],
      { env: { PATH: process.env.PATH }, timeout: 30_000 },
      (error, out, err) => resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, out, err }),
    );
  });
}

describe('the operator CLI: partitions <group>', () => {
  const root = uniqueRoot('cli-partitions');
  const base = (): string[] => ['--connect', zkConnect(), '--root', root];
  let clients: ZkLockBackend[] = [];
  let members: Partitioner<number>[] = [];
  beforeAll(async () => {
    await ensureBuilt();
    clients = await Promise.all(
      ['shop-1', 'shop-2'].map((identity) =>
        ZkLockBackend.connect({ connectionString: zkConnect(), rootPath: root, identity, emptyDirectoryGraceMs: 0 }),
      ),
    );
  }, 240_000);
  afterAll(async () => {
    await Promise.all(members.map((member) => member.stop()));
    await Promise.all(clients.map((client) => client.close()));
    const inspector = await ZkInspector.connect(zkConnect());
    await inspector.removeTree(root);
    await inspector.removeTree(`${root}-records`);
    await inspector.removeTree(`${root}-groups`);
    await inspector.close();
  });

  /** The record of `part` as ZooKeeper holds it (the server's own state), parsed; `null` if none. */
  async function recordOf(part: number | string): Promise<Record<string, string> | null> {
    const inspector = await ZkInspector.connect(zkConnect());
    try {
      const data = await inspector.data(`${root}-records/${encodeLockName(`partition:carts/${part}`)}`);
      return data === null ? null : (JSON.parse(data) as Record<string, string>);
    } finally {
      await inspector.close();
    }
  }

  /** The lock node that holds `part` now, in ZooKeeper. */
  async function holderNode(part: number): Promise<string> {
    const [holder] = await clients[0].contenders(`partition:carts/${part}`);
    return holder.node;
  }

  /** Waits until each owner's record of its parts names the node that holds now. */
  async function published(parts: number[]): Promise<void> {
    for (const part of parts) {
      const node = await holderNode(part);
      await waitUntil(async () => (await recordOf(part))?.node === node, `part ${part}'s record`);
    }
  }

  const tokenOf = (part: number): string => {
    const member = members.find((m) => m.owned().includes(part))!;
    return member.handle(part)!.fencingToken.toString();
  };

  it('lists the members and each part with its owner, token, holder, age and session; --json too', async () => {
    members = clients.map(
      (client, i) => new Partitioner(client, 'carts', { partitions: 4, memberId: `shop-${i + 1}` }),
    );
    for (const member of members) await member.start();
    await waitUntil(() => members.every((member) => member.owned().length === 2), 'two parts each');
    await published([0, 1, 2, 3]);
    const owner = (part: number): string => (members[0].owned().includes(part) ? 'shop-1' : 'shop-2');
    for (const part of [0, 1, 2, 3])
      expect(await recordOf(part)).toEqual({ node: await holderNode(part), token: tokenOf(part), member: owner(part) });
    const text = await cli(['partitions', 'carts', ...base()]);
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/^carts: 2 member\(s\)\n/);
    expect(text.out).toMatch(/\n\s*part\s+owner\s+token\s+identity\s+age\s+session\s+waiting\n/);
    for (const part of [0, 1, 2, 3])
      expect(text.out).toMatch(
        new RegExp(
          `\\n\\s+${part}\\s+${owner(part)}\\s+${tokenOf(part)}\\s+${owner(part)}\\s+\\d+ s\\s+0x[0-9a-f]{16}\\s+0`,
        ),
      );
    const listed = JSON.parse((await cli(['partitions', 'carts', '--json', ...base()])).out);
    expect(listed.members.map((m: { id: string }) => m.id)).toEqual(['shop-1', 'shop-2']);
    expect(listed.parts).toEqual(
      [0, 1, 2, 3].map((part) => ({
        part: String(part),
        owner: owner(part),
        token: tokenOf(part),
        identity: owner(part),
        sessionId: `0x${clients[owner(part) === 'shop-1' ? 0 : 1].client.session.id}`,
        since: expect.any(String),
        waiters: 0,
      })),
    );
    expect((await cli(['partitions', ...base()])).code).toBe(2);
  });

  it("shows the token of the ownership that holds now: a moved part's new token, never a record left by another node", async () => {
    const before = new Map([0, 1, 2, 3].map((part) => [part, BigInt(tokenOf(part))]));
    const moved = members[1].owned();
    await members[1].stop();
    await waitUntil(() => members[0].owned().length === 4, 'shop-1 owns every part');
    await published([0, 1, 2, 3]);
    const listed = JSON.parse((await cli(['partitions', 'carts', '--json', ...base()])).out);
    for (const { part, owner, token } of listed.parts as Array<{ part: string; owner: string; token: string }>) {
      expect(owner).toBe('shop-1');
      expect(token).toBe(tokenOf(Number(part)));
      if (moved.includes(Number(part))) expect(BigInt(token)).toBeGreaterThan(before.get(Number(part))!);
      else expect(BigInt(token)).toBe(before.get(Number(part)));
    }
    // Part 9 is held by a client that is no member, under a record another node left: no token shown.
    const stray = await clients[1].acquire('partition:carts/9');
    try {
      await clients[1].writeRecord('partition:carts/9', { node: 'an-earlier-node', token: '7', member: 'shop-2' });
      const strayListed = JSON.parse((await cli(['partitions', 'carts', '--json', ...base()])).out);
      expect(strayListed.parts.find((p: { part: string }) => p.part === '9')).toMatchObject({
        owner: null,
        token: null,
        identity: 'shop-2',
      });
      const text = await cli(['partitions', 'carts', ...base()]);
      expect(text.out).toMatch(/\n\s+9\s+\(not a member\)\s+shop-2\s/);
    } finally {
      await stray.release();
    }
  });
});
