import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

import { ReentrantLocker, ZkLockBackend } from '../../lib/index';
import { freePort } from '../support/free-port';
import { waitUntil } from '../support/wait-until';
import { ensureBuilt } from '../support/fixture-app';
import { uniqueRoot, zkConnect } from '../support/zk-test-env';
import { ZkInspector } from '../support/zookeeper/zk-inspector';

const ROOT = join(__dirname, '..', '..');
const BIN = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).bin['nestjs-zk-lock'] as string;

interface Run {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/** The built bin, as `npx nestjs-zk-lock` runs it. */
function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(ROOT, BIN), ...args],
      { env: { PATH: process.env.PATH, ...env }, timeout: 30_000 },
      (error, out, err) => resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, out, err }),
    );
  });
}

/** `npx nestjs-zk-lock list|show|revoke|release` against a real ZooKeeper. */
describe('the operator CLI', () => {
  const root = uniqueRoot('cli');
  let app: ZkLockBackend;
  let waiter: ZkLockBackend;
  const base = (): string[] => ['--connect', zkConnect(), '--root', root];
  beforeAll(async () => {
    await ensureBuilt();
    [app, waiter] = await Promise.all(
      ['billing-1', 'billing-2'].map((identity) =>
        ZkLockBackend.connect({ connectionString: zkConnect(), rootPath: root, identity, emptyDirectoryGraceMs: 0 }),
      ),
    );
  }, 240_000);
  afterAll(async () => {
    await Promise.all([app?.close(), waiter?.close()]);
    const inspector = await ZkInspector.connect(zkConnect());
    await inspector.removeTree(root);
    await inspector.removeTree(`${root}-records`);
    await inspector.close();
  });

  it('list and show: holders and waiters in queue order, with mode, identity, age and session; --json too', async () => {
    const lock = await app.acquire('invoices', { revocable: true });
    const waiting = waiter.acquire('invoices', { timeoutMs: 20_000 });
    const reader = await app.acquire('reports', { mode: 'read' });
    await new Promise((resolve) => setTimeout(resolve, 100));

    const list = await cli(['list', ...base()]);
    expect(list.code).toBe(0);
    expect(list.out).toMatch(
      /^invoices\n\s+mode\s+identity\s+age\s+session\s+node\n\s+holds\s+write\s+billing-1\s+\d+ s\s+0x[0-9a-f]{16}\s+\S+__lock__\d{10}\n\s+waits\s+write\s+billing-2/m,
    );
    expect(list.out).toMatch(/^reports\n[\s\S]*holds\s+read\s+billing-1/m);

    const show = await cli(['show', 'invoices', '--json', ...base()]);
    const listed = JSON.parse(show.out);
    expect(listed).toMatchObject({
      kind: 'lock',
      name: 'invoices',
      holders: [{ identity: 'billing-1', sessionId: `0x${app.client.session.id}` }],
      waiters: [{ identity: 'billing-2' }],
    });
    expect((await cli(['show', 'nothing-here', ...base()])).out).toContain('"nothing-here" is free');

    const revoke = await cli(['revoke', 'invoices', ...base()]);
    expect(revoke).toMatchObject({ code: 0 });
    await waitUntil(() => lock.revocation.aborted, 'the revocable holder is asked');

    await lock.release();
    await (await waiting).release();
    await reader.release();
  });

  it("list, show and history: a job's last run and its kept hold, idle or not; history newest first, --json too", async () => {
    const locker = new ReentrantLocker(app, 10_000);
    const job = { maxHoldMs: 60_000 } as const;
    await locker.withLock('nightly', () => 'ran', job);
    await locker.withLock('nightly', () => Promise.reject(new Error('failed')), job).catch(() => undefined);
    await locker.withLock('nightly', () => 'ran', { holdAtLeastMs: 60_000 });
    const by = `${hostname()}:${process.pid}`;

    const list = await cli(['list', 'night', ...base()]);
    expect(list.out).toMatch(
      new RegExp(
        `^nightly\\n  idle: no holder, no waiter\\n  last run: ok by ${by}, started \\d+ s ago \\(\\S+Z\\), took \\d+ ms\\n  kept by holdAtLeastMs until \\S+Z\\n?$`,
      ),
    );
    const show = JSON.parse((await cli(['show', 'nightly', '--json', ...base()])).out);
    expect(show).toMatchObject({ name: 'nightly', holders: [], waiters: [], lastRun: { by, outcome: 'ok' } });
    expect(Date.parse(show.keptUntil) - Date.parse(show.lastRun.startedAt)).toBeGreaterThanOrEqual(60_000);

    const history = await cli(['history', 'nightly', ...base()]);
    expect(history.out).toMatch(/^nightly: the last 3 run\(s\), newest first\n {2}kept by holdAtLeastMs until \S+Z\n/);
    expect(
      history.out
        .trimEnd()
        .split('\n')
        .slice(3)
        .map((line) => line.trim().split(/\s+/)[0]),
    ).toEqual(['ok', 'error', 'ok']);
    const runs = JSON.parse((await cli(['history', 'nightly', '--json', ...base()])).out);
    expect(runs).toMatchObject({ name: 'nightly', keptUntil: show.keptUntil });
    expect(runs.runs.map((run: { outcome: string }) => run.outcome)).toEqual(['ok', 'error', 'ok']);
    expect((await cli(['history', 'nothing-here', ...base()])).out).toContain('"nothing-here" has no runs recorded');
  });

  it("release --force deletes the holder's node (after --yes; without a terminal it is not confirmed), and the waiter gets the lock", async () => {
    const lock = await app.acquire('stuck');
    const waiting = waiter.acquire('stuck', { timeoutMs: 20_000 });
    await new Promise((resolve) => setTimeout(resolve, 100));

    expect(await cli(['release', 'stuck', ...base()])).toMatchObject({
      code: 2,
      err: expect.stringContaining('add --force'),
    });
    expect(await cli(['release', 'stuck', '--force', ...base()])).toMatchObject({
      code: 4,
      out: expect.stringContaining('Not confirmed'),
    });
    expect(lock.isHeld()).toBe(true);

    const released = await cli(['release', 'stuck', '--force', '--yes', ...base()]);
    expect(released).toMatchObject({
      code: 0,
      out: expect.stringMatching(/^Deleted 1 holder node\(s\) of "stuck": \S+__lock__\d{10}\./),
    });
    const next = await waiting; // the waiter is granted at once
    expect(next.isHeld()).toBe(true);
    await next.release();
    await lock.release(); // its node is gone already: nothing to do
    expect(await cli(['release', 'stuck', '--force', '--yes', ...base()])).toMatchObject({
      code: 1,
      out: expect.stringContaining('Nobody holds'),
    });
  });

  it('exit codes: 2 for usage, 3 when no server answers, 0 for help', async () => {
    expect(await cli(['frobnicate'])).toMatchObject({
      code: 2,
      err: expect.stringContaining('unknown command "frobnicate"'),
    });
    expect(await cli(['show'])).toMatchObject({ code: 2, err: expect.stringContaining('show needs a lock name') });
    const nobody = `127.0.0.1:${await freePort()}`;
    const down = await cli(['list', '--connect', nobody, '--timeout', '1000']);
    expect(down.code).toBe(3);
    expect(down.err).toContain(nobody);
    expect(await cli(['--help'])).toMatchObject({
      code: 0,
      out: expect.stringContaining('Usage: nestjs-zk-lock <command>'),
    });
  });
});
