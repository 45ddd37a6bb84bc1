import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
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
    await inspector.removeTree(`${root}-groups`);
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
    expect(revoke).toMatchObject({
      code: 0,
      out: expect.stringMatching(/^Asked billing-1 \(\S+__lock__\d{10}\) to release/),
    });
    await waitUntil(() => lock.revocation.aborted, 'the revocable holder is asked');
    // The request overwrote the holder's identity: listings say so apart from the identity.
    expect((await cli(['show', 'invoices', ...base()])).out).toMatch(/holds\s+write\s+\? \(revocation requested\)/);
    expect(JSON.parse((await cli(['show', 'invoices', '--json', ...base()])).out).holders).toEqual([
      expect.objectContaining({ identity: null, revocable: 'revocable', revocationRequested: true }),
    ]);

    await lock.release();
    await (await waiting).release();
    await reader.release();
  });

  it('members <group>: the members in id order, with data, age and session; --json too; needs no lock root', async () => {
    const second = await waiter.joinGroup('workers', 'worker-b', { zone: 'eu-2' });
    const first = await app.joinGroup('workers', 'worker-a', { zone: 'eu-1' });
    const text = await cli(['members', 'workers', ...base()]);
    expect(text.code).toBe(0);
    expect(text.out).toMatch(
      /^workers: 2 member\(s\)\n\s+id\s+data\s+age\s+session\n\s+worker-a\s+\{"zone":"eu-1"\}\s+\d+ s\s+0x[0-9a-f]{16}\n\s+worker-b\s+\{"zone":"eu-2"\}/,
    );
    const listed = JSON.parse((await cli(['members', 'workers', '--json', ...base()])).out);
    expect(listed).toEqual({
      group: 'workers',
      members: [
        { id: 'worker-a', data: { zone: 'eu-1' }, since: expect.any(String), sessionId: `0x${app.client.session.id}` },
        {
          id: 'worker-b',
          data: { zone: 'eu-2' },
          since: expect.any(String),
          sessionId: `0x${waiter.client.session.id}`,
        },
      ],
    });
    // ZooKeeper's own state: one ephemeral node per member beside the lock root, its data the member's.
    const inspector = await ZkInspector.connect(zkConnect());
    try {
      expect(((await inspector.children(`${root}-groups/workers`)) ?? []).sort()).toEqual(['worker-a', 'worker-b']);
      expect(JSON.parse((await inspector.data(`${root}-groups/workers/worker-a`))!)).toEqual({ zone: 'eu-1' });
    } finally {
      await inspector.close();
    }
    await Promise.all([first.leave(), second.leave()]);
    expect(await cli(['members', 'workers', ...base()])).toMatchObject({
      code: 0,
      out: 'No members in group "workers".\n',
    });
    const bare = ['--connect', zkConnect(), '--root', uniqueRoot('cli-no-locks')];
    expect(await cli(['members', 'workers', ...bare])).toMatchObject({
      code: 0,
      out: 'No members in group "workers".\n',
    });
    expect(await cli(['members', ...base()])).toMatchObject({
      code: 2,
      err: expect.stringContaining('members needs a group name'),
    });
  });

  it('revoke asks only the holders that opted in: one that did not is named, keeps its identity, and revoke exits 6', async () => {
    const plain = await app.acquire('reports-2', { mode: 'read' });
    const revocable = await waiter.acquire('reports-2', { mode: 'read', revocable: true });
    const revoke = await cli(['revoke', 'reports-2', '--json', ...base()]);
    expect(revoke.code).toBe(6);
    expect(JSON.parse(revoke.out)).toEqual({
      name: 'reports-2',
      asked: [{ node: expect.any(String), identity: 'billing-2', revocable: 'revocable' }],
      notOptedIn: [{ node: expect.any(String), identity: 'billing-1', revocable: 'not-revocable' }],
    });
    await waitUntil(() => revocable.revocation.aborted, 'the revocable holder is asked');
    expect(plain.revocation.aborted).toBe(false);
    // ZooKeeper's own data: the holder that did not opt in still shows its identity.
    const identities = (await app.contenders('reports-2')).map((c) => c.identity).sort();
    expect(identities).toEqual(['__REVOKE__', 'billing-1']);
    await revocable.release();

    const text = await cli(['revoke', 'reports-2', ...base()]);
    expect(text.code).toBe(6);
    expect(text.out).toMatch(
      /^Not asked: billing-1 \(\S+__rlock__\d{10}\) did not opt in to revocation \(revocable: true\)/,
    );
    expect((await app.contenders('reports-2')).map((c) => c.identity)).toEqual(['billing-1']);
    expect(JSON.parse((await cli(['show', 'reports-2', '--json', ...base()])).out).holders).toEqual([
      expect.objectContaining({ identity: 'billing-1', revocable: 'not-revocable', revocationRequested: false }),
    ]);
    await plain.release();
  });

  it("revoke still asks another client's holder (Kazoo's, Curator's: it may have opted in), as Curator's Revoker does", async () => {
    // A node as Kazoo names it (its random guid carries no tag of ours), holding 'foreign'.
    const node = '0123456789abcdef0123456789abcdef__lock__0000000000';
    const inspector = await ZkInspector.connect(zkConnect());
    await inspector.create(`${app.pathOf('foreign')}/${node}`, 'kazoo-worker');
    try {
      const revoke = await cli(['revoke', 'foreign', '--json', ...base()]);
      expect(revoke.code).toBe(0);
      expect(JSON.parse(revoke.out)).toEqual({
        name: 'foreign',
        asked: [{ node, identity: 'kazoo-worker', revocable: 'unknown' }],
        notOptedIn: [],
      });
      expect((await app.contenders('foreign')).map((c) => c.identity)).toEqual(['__REVOKE__']);
    } finally {
      await inspector.removeTree(app.pathOf('foreign'));
      await inspector.close();
    }
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
        `^nightly\\n  idle: no holder, no waiter\\n  last run: ok by billing-1 \\(${by}\\), started \\d+ s ago \\(\\S+Z\\), took \\d+ ms\\n  kept by holdAtLeastMs until \\S+Z\\n?$`,
      ),
    );
    const show = JSON.parse((await cli(['show', 'nightly', '--json', ...base()])).out);
    expect(show).toMatchObject({
      name: 'nightly',
      holders: [],
      waiters: [],
      lastRun: { by, identity: 'billing-1', outcome: 'ok' },
    });
    expect(Date.parse(show.keptUntil) - Date.parse(show.lastRun.startedAt)).toBeGreaterThanOrEqual(60_000);

    const history = await cli(['history', 'nightly', ...base()]);
    expect(history.out).toMatch(/^nightly: the last 3 run\(s\), newest first\n {2}kept by holdAtLeastMs until \S+Z\n/);
    expect(
      history.out
        .trimEnd()
        .split('\n')
        .slice(3)
        .map((line) => line.trim().split(/ {2,}/).slice(0, 2)),
    ).toEqual([
      ['ok', `billing-1 (${by})`],
      ['error', `billing-1 (${by})`],
      ['ok', `billing-1 (${by})`],
    ]);
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

  it('a --root that does not exist is an error (exit 5) naming it and --root, for every command that reads under it; nothing is created', async () => {
    const missing = `${root}-no-such-root`;
    const at = ['--connect', zkConnect(), '--root', missing];
    for (const command of [
      ['list'],
      ['show', 'invoices'],
      ['revoke', 'invoices'],
      ['release', 'invoices', '--force', '--yes'],
    ]) {
      const run = await cli([...command, ...at]);
      expect(run).toMatchObject({ code: 5, out: '' });
      expect(run.err).toContain(`No lock root "${missing}" at "${zkConnect()}"`);
      expect(run.err).toContain('Check --root (or $ZK_LOCK_ROOT');
    }
    // $ZK_LOCK_ROOT is the default of --root
    expect(await cli(['show', 'invoices', '--connect', zkConnect()], { ZK_LOCK_ROOT: missing })).toMatchObject({
      code: 5,
    });
    const inspector = await ZkInspector.connect(zkConnect());
    expect(await inspector.exists(missing)).toBe(false);
    await inspector.close();
  });

  it('under --json a failure is one JSON object on stderr, with a stable code, the message and the exit code; stdout stays empty', async () => {
    const error = async (args: string[]): Promise<{ code: string; message: string; exitCode: number }> => {
      const run = await cli([...args, '--json']);
      expect(run.out).toBe('');
      expect(run.err.trim().split('\n')).toHaveLength(1);
      const parsed = JSON.parse(run.err).error;
      expect(parsed.exitCode).toBe(run.code);
      return parsed;
    };
    expect(await error(['show', 'invoices', '--connect', zkConnect(), '--root', `${root}-none`])).toMatchObject({
      code: 'CLI_ROOT_MISSING',
      exitCode: 5,
      message: expect.stringContaining(`"${root}-none"`),
    });
    expect(await error(['frobnicate'])).toEqual({
      code: 'CLI_USAGE',
      message: 'unknown command "frobnicate"',
      exitCode: 2,
    });
    const nobody = `127.0.0.1:${await freePort()}`;
    expect(await error(['list', '--connect', nobody])).toMatchObject({ code: 'CLI_NO_SERVER', exitCode: 3 });
    // A failure the library reports keeps its own code: a lease semaphore has no holders to ask.
    const lease = await app.acquireLease('pool', { maxLeases: 2 });
    expect(await error(['revoke', 'pool', ...base()])).toMatchObject({ code: 'LOCK_KIND_MISMATCH', exitCode: 1 });
    await lease.release();
  });

  it('cannot connect: the message names --connect, $ZK_LOCK_CONNECT and --timeout, not the library options', async () => {
    // A server that accepts the connection and never answers: the connect times out.
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const mute = `127.0.0.1:${(silent.address() as { port: number }).port}`;
    try {
      const timedOut = await cli(['list', '--timeout', '1500'], { ZK_LOCK_CONNECT: mute });
      expect(timedOut.code).toBe(3);
      expect(timedOut.err).toContain(`No ZooKeeper server answered at "${mute}" within 1500 ms`);
      expect(timedOut.err).toContain('--connect (or $ZK_LOCK_CONNECT)');
      expect(timedOut.err).toContain('raise --timeout');
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
    const refused = await cli(['list', '--connect', `127.0.0.1:${await freePort()}`]);
    expect(refused.code).toBe(3);
    expect(refused.err).toContain('refused the connection');
    for (const run of [refused, await cli(['list', '--connect', 'a:b:c'])]) {
      expect(run.err).toContain('--connect (or $ZK_LOCK_CONNECT)');
      expect(run.err).not.toMatch(/connectTimeoutMs|forTesting/);
    }
  });

  it('a host DNS cannot resolve fails at once (exit 3), naming the host and DNS, without waiting out --timeout', async () => {
    // .invalid never resolves (RFC 6761). Waiting out --timeout would outlast the run's 30 s limit.
    const run = await cli(['list', '--connect', 'zk-1.no-such-host.invalid:2181/app', '--timeout', '600000']);
    expect(run.code).toBe(3);
    expect(run.err).toMatch(
      /^nestjs-zk-lock: Cannot resolve "zk-1\.no-such-host\.invalid" of "zk-1\.no-such-host\.invalid:2181\/app" \(DNS: \w+\)\./,
    );
    expect(run.err).toContain('--connect (or $ZK_LOCK_CONNECT)');
    // One host that resolves is enough: the client tries it.
    const some = await cli(['list', '--connect', `zk-1.no-such-host.invalid:2181,${zkConnect()}`, '--root', root]);
    expect(some).toMatchObject({ code: 0, err: '' });
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
    const help = await cli(['--help']);
    expect(help).toMatchObject({ code: 0, out: expect.stringContaining('Usage: nestjs-zk-lock <command>') });
    for (const documented of ['$ZK_LOCK_CONNECT', '$ZK_LOCK_ROOT', '--timeout <ms>', '5 no such --root', 'DNS'])
      expect(help.out).toContain(documented);
  });
});
