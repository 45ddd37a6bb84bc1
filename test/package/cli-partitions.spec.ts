import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { Partitioner, ZkLockBackend } from '../../lib/index';
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

  it('lists the members and each part with its owner, holder, age and session; --json too', async () => {
    members = clients.map(
      (client, i) => new Partitioner(client, 'carts', { partitions: 4, memberId: `shop-${i + 1}` }),
    );
    for (const member of members) await member.start();
    await waitUntil(() => members.every((member) => member.owned().length === 2), 'two parts each');
    const text = await cli(['partitions', 'carts', ...base()]);
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/^carts: 2 member\(s\)\n/);
    const owner = (part: number): string => (members[0].owned().includes(part) ? 'shop-1' : 'shop-2');
    for (const part of [0, 1, 2, 3])
      expect(text.out).toMatch(
        new RegExp(`\\n\\s+${part}\\s+${owner(part)}\\s+${owner(part)}\\s+\\d+ s\\s+0x[0-9a-f]{16}\\s+0`),
      );
    const listed = JSON.parse((await cli(['partitions', 'carts', '--json', ...base()])).out);
    expect(listed.members.map((m: { id: string }) => m.id)).toEqual(['shop-1', 'shop-2']);
    expect(listed.parts).toEqual(
      [0, 1, 2, 3].map((part) => ({
        part: String(part),
        owner: owner(part),
        identity: owner(part),
        sessionId: `0x${clients[owner(part) === 'shop-1' ? 0 : 1].client.session.id}`,
        since: expect.any(String),
        waiters: 0,
      })),
    );
    expect((await cli(['partitions', ...base()])).code).toBe(2);
  });
});
