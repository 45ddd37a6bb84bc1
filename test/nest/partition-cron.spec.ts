import 'reflect-metadata';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';

import { encodeLockName, PartitionService, ZkLockModule } from '../../lib/index';
import { waitUntil } from '../support/wait-until';
import { uniqueRoot, zkConnect } from '../support/zk-test-env';
import { ZkInspector } from '../support/zookeeper/zk-inspector';

const repo = resolve(__dirname, '../..');
const PARTS = 64;
const DOCUMENTED_CRON = `@Cron('*/10 * * * * *')`;

/** The cron example of docs/recipes.md ("Sharding work"), as a reader would paste it. */
function cronExample(): string {
  const recipes = readFileSync(join(repo, 'docs/recipes.md'), 'utf8');
  const section = recipes.slice(recipes.indexOf('## Sharding work'));
  const block = [...section.matchAll(/```ts\n([\s\S]*?)```/g)].find(([, code]) => code.includes('@Cron('));
  if (!block) throw new Error('docs/recipes.md has no @Cron example under "## Sharding work"');
  return block[1];
}

/** One call of the store by one application: which part, under which token, when (process clock). */
interface Synced {
  readonly app: string;
  readonly part: number;
  readonly token: bigint;
  readonly at: bigint;
}

/**
 * The documented cron example, run by @nestjs/schedule in two Nest applications on one
 * ZooKeeper: every tick syncs the parts its application owns, and a part's syncs by the
 * two applications never interleave, across a join and a graceful leave.
 */
describe('the cron example of docs/recipes.md (Sharding work), on ZooKeeper', () => {
  const rootPath = uniqueRoot('partition-cron');
  const dir = mkdtempSync(join(tmpdir(), 'partition-cron-'));
  const file = join(dir, 'orders-sync.ts');
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'));
  const example = cronExample();
  // Only two changes: the package's name pointed at this checkout, and a tick every second (not ten) to keep the test short.
  writeFileSync(
    file,
    example
      .replace(`from 'nestjs-zk-lock'`, `from '${join(repo, 'lib/index')}'`)
      .replace(DOCUMENTED_CRON, `@Cron('* * * * * *')`),
  );
  const synced: Synced[] = [];
  const apps = new Map<string, INestApplication>();
  let inspector: ZkInspector;

  beforeAll(async () => {
    inspector = await ZkInspector.connect(zkConnect());
  });
  afterAll(async () => {
    await Promise.all([...apps.values()].map((app) => app.close()));
    await inspector.removeTree(rootPath);
    await inspector.removeTree(`${rootPath}-records`);
    await inspector.removeTree(`${rootPath}-groups`);
    await inspector.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function startApp(app: string): Promise<INestApplication> {
    const example = require(file) as typeof import('./partition-cron.types');
    const store: InstanceType<typeof example.OrdersStore> = {
      syncPart: async (part, token, signal) => {
        expect(signal.aborted).toBe(false);
        synced.push({ app, part, token, at: process.hrtime.bigint() });
      },
    };
    const moduleRef = await Test.createTestingModule({
      imports: [
        ScheduleModule.forRoot(),
        ZkLockModule.forRoot({ connectionString: zkConnect(), rootPath, identity: app, sessionTimeoutMs: 4000 }),
      ],
      providers: [example.OrdersSync, { provide: example.OrdersStore, useValue: store }],
    }).compile();
    const nest = moduleRef.createNestApplication({ logger: false });
    await nest.init();
    apps.set(app, nest);
    return nest;
  }

  const owned = (app: string): number[] =>
    apps.get(app)!.get(PartitionService).partitioner('orders-sync')!.owned() as number[];

  /** Waits for a tick of `app`, begun after this call, that syncs exactly `parts`. */
  async function tickSyncing(app: string, parts: () => number[]): Promise<void> {
    const from = process.hrtime.bigint();
    await waitUntil(() => {
      const want = parts();
      const seen = new Set(synced.filter((s) => s.app === app && s.at > from).map((s) => s.part));
      return want.length > 0 && want.every((part) => seen.has(part));
    }, `${app} syncs its parts`);
  }

  it('is the code tested here, but for the cron period', () => {
    expect(example).toContain(DOCUMENTED_CRON);
    expect(readFileSync(file, 'utf8')).not.toContain(DOCUMENTED_CRON);
  });

  it('each tick syncs only owned parts; a part is never synced by both applications at once', async () => {
    await startApp('A');
    await waitUntil(() => owned('A').length === PARTS, 'A owns every part');
    await tickSyncing('A', () => owned('A'));
    await startApp('B');
    await waitUntil(() => owned('A').length === PARTS / 2 && owned('B').length === PARTS / 2, 'balanced');
    const [ownedByA, ownedByB] = [owned('A'), owned('B')];
    const steady = process.hrtime.bigint();
    await Promise.all([tickSyncing('A', () => ownedByA), tickSyncing('B', () => ownedByB)]);
    // In steady state, each application syncs its own parts and no other.
    const after = synced.filter((s) => s.at > steady);
    expect(new Set(after.filter((s) => s.app === 'A').map((s) => s.part))).toEqual(new Set(ownedByA));
    expect(new Set(after.filter((s) => s.app === 'B').map((s) => s.part))).toEqual(new Set(ownedByB));
    await apps.get('B')!.close(); // a graceful leave: A takes B's parts over
    apps.delete('B');
    await waitUntil(() => owned('A').length === PARTS, 'A owns every part again');
    await tickSyncing('A', () => owned('A'));

    for (let part = 0; part < PARTS; part++) {
      const history = synced.filter((s) => s.part === part).sort((x, y) => (x.at < y.at ? -1 : 1));
      // One owner at a time: each token is one application's, and tokens never go back.
      const runs = history.filter((s, i) => i === 0 || s.token !== history[i - 1].token);
      for (let i = 1; i < runs.length; i++) expect(runs[i].token).toBeGreaterThan(runs[i - 1].token);
      expect(new Set(runs.map((run) => run.token)).size).toBe(runs.length);
      // ZooKeeper's own state: the part's lock is held by A's node, whose record carries the token A synced with last.
      const record = JSON.parse(
        (await inspector.data(`${rootPath}-records/${encodeLockName(`partition:orders-sync/${part}`)}`))!,
      );
      const [holder] = (await inspector.children(`${rootPath}/${encodeLockName(`partition:orders-sync/${part}`)}`))!;
      expect(record).toMatchObject({ member: 'A', node: holder, token: history.at(-1)!.token.toString() });
      expect(history.at(-1)!.app).toBe('A');
    }
    // B synced its parts, and every part B held moved back to A with a higher token.
    expect(new Set(synced.filter((s) => s.app === 'B').map((s) => s.part))).toEqual(new Set(ownedByB));
  });
});
