import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { ReentrantLocker } from '../../lib/index';
import { ensureBuilt } from '../support/fixture-app';
import { freePort } from '../support/free-port';
import { LockFixture } from '../support/lock-fixture';
import { KEPT_HOLD_MARKER } from '../support/node-names';
import { TcpProxy } from '../support/tcp-proxy';
import { waitUntil } from '../support/wait-until';
import { zkConnect, zkPort } from '../support/zk-test-env';

const ROOT = join(__dirname, '..', '..');
const BIN = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).bin['nestjs-zk-lock'] as string;

/**
 * The command run under the lock: appends `start <id> <pid>` to a log, then `end <id>`
 * after `holdMs` and exits with `code`; on SIGTERM it appends `term <id>` and exits 0, or
 * with `ignore-term` keeps running (only SIGKILL ends it). One append per line: the lines
 * of concurrent jobs interleave whole, in the order they happened.
 */
const JOB = `
const [log, id, holdMs, code, onTerm] = process.argv.slice(1);
const { appendFileSync } = require('node:fs');
const note = (line) => appendFileSync(log, line + '\\n');
process.on('SIGTERM', () => { note('term ' + id); if (onTerm !== 'ignore-term') process.exit(0); });
note('start ' + id + ' ' + process.pid);
setTimeout(() => { note('end ' + id); process.exit(Number(code)); }, Number(holdMs));
`;

interface Run {
  readonly code: number | null;
  readonly err: string;
}

/** CLIs still running: a failed test's are killed, not left to keep Jest up. */
const running = new Set<ChildProcess>();

/** `npx nestjs-zk-lock exec …`, the built bin, as a process of its own (`pid` to signal it). */
function cli(args: string[]): Promise<Run> & { readonly pid: number } {
  const child = spawn(process.execPath, [join(ROOT, BIN), ...args], { stdio: ['ignore', 'inherit', 'pipe'] });
  running.add(child);
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const done = new Promise<Run>((resolve) =>
    child.on('close', (code) => {
      running.delete(child);
      resolve({ code, err });
    }),
  );
  return Object.assign(done, { pid: child.pid! });
}

/** `exec`'s lock tests, against a real ZooKeeper, with real processes. */
describe('nestjs-zk-lock exec', () => {
  let fixture: LockFixture;
  let dir: string;
  const base = (connect = zkConnect()): string[] => ['--connect', connect, '--root', fixture.rootPath];
  const job = (log: string, id: string, holdMs: number, code = 0, onTerm = ''): string[] => [
    '--',
    process.execPath,
    '-e',
    JOB,
    log,
    id,
    String(holdMs),
    String(code),
    onTerm,
  ];
  const lines = (log: string): string[] => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []);
  const noNodes = async (name: string): Promise<boolean> => ((await fixture.nodes(name)) ?? []).length === 0;

  beforeAll(async () => {
    await ensureBuilt();
    fixture = await LockFixture.create('cli-exec');
    await fixture.backend(); // for fixture.nodes(): the lock paths
    dir = mkdtempSync(join(tmpdir(), 'cli-exec-'));
  }, 240_000);
  afterEach(async () => {
    // A failed test's CLI: killed, and its stderr let go (its command, if still running, holds the pipe).
    const left = [...running].map(async (child) => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      if (child.exitCode === null && child.signalCode === null && child.kill('SIGKILL')) await exited;
      child.stderr?.destroy();
      running.delete(child);
    });
    await Promise.all(left);
  });
  afterAll(async () => {
    await fixture?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it("two at once never overlap: the second waits in ZooKeeper's queue, and each passes on its command's exit code", async () => {
    const log = join(dir, 'two.log');
    const first = cli(['exec', 'nightly', ...base(), ...job(log, 'a', 1500, 0)]);
    await waitUntil(() => lines(log).length > 0, 'a command to start');
    const second = cli(['exec', 'nightly', ...base(), ...job(log, 'b', 200, 7)]);
    // While one command runs, its lock node is there and the other exec queues behind it.
    await fixture.queued('nightly', 2);
    expect(lines(log)).toEqual([expect.stringMatching(/^start a \d+$/)]);
    const [holder] = await fixture.backend().then((backend) => backend.contenders('nightly'));
    expect(holder).toMatchObject({ holding: true, identity: expect.stringMatching(`^${hostname()}:${first.pid}:`) });

    expect(await first).toMatchObject({ code: 0 });
    expect(await second).toMatchObject({ code: 7 });
    expect(lines(log).map((line) => line.split(' ').slice(0, 2).join(' '))).toEqual([
      'start a',
      'end a',
      'start b',
      'end b',
    ]);
    expect(await noNodes('nightly')).toBe(true);
  });

  it('--skip-if-locked exits 121, --timeout 120, SIGTERM in the wait 143, without running the command while another holds; 3 when no server answers', async () => {
    const log = join(dir, 'skipped.log');
    const held = await fixture.backend().then((backend) => backend.acquire('report'));
    const skipped = await cli(['exec', 'report', '--skip-if-locked', ...base(), ...job(log, 's', 0)]);
    expect(skipped).toMatchObject({ code: 121, err: expect.stringContaining('"report" is locked: skipped') });
    const timedOut = await cli(['exec', 'report', '--timeout', '1500', ...base(), ...job(log, 't', 0)]);
    expect(timedOut).toMatchObject({ code: 120, err: expect.stringContaining('the command was not run') });
    // SIGTERM while it waits ends the wait: 128 + 15, nothing run, its queued node withdrawn.
    const waiting = cli(['exec', 'report', ...base(), ...job(log, 'w', 0)]);
    await fixture.queued('report', 2);
    process.kill(waiting.pid, 'SIGTERM');
    expect(await waiting).toMatchObject({ code: 143 });
    expect(lines(log)).toEqual([]);
    expect(await fixture.nodes('report')).toHaveLength(1); // only the holder's: the waiters withdrew
    await held.release();

    const nobody = `127.0.0.1:${await freePort()}`;
    expect(await cli(['exec', 'report', '--connect', nobody, '--timeout', '1000', ...job(log, 'n', 0)])).toMatchObject({
      code: 3,
    });
    expect(lines(log)).toEqual([]);
  });

  it('--skip-if-locked skips during a job’s kept hold (holdAtLeastMs) of another instance, and runs once it ended', async () => {
    const log = join(dir, 'kept.log');
    const HOLD_MS = 3_000;
    const instance = await fixture.backend();
    let startedAt = 0;
    await new ReentrantLocker(instance, 10_000).withLock('tick', () => void (startedAt = performance.now()), {
      holdAtLeastMs: HOLD_MS,
    });
    expect(await fixture.nodes('tick')).toEqual([expect.stringMatching(KEPT_HOLD_MARKER)]); // no lock node
    const skipped = await cli(['exec', 'tick', '--skip-if-locked', ...base(), ...job(log, 's', 0)]);
    expect(skipped).toMatchObject({ code: 121, err: expect.stringContaining('"tick" is locked: skipped') });
    expect(lines(log)).toEqual([]);
    if (performance.now() < startedAt + HOLD_MS) await sleep(startedAt + HOLD_MS - performance.now());
    expect(await cli(['exec', 'tick', '--skip-if-locked', ...base(), ...job(log, 'r', 0)])).toMatchObject({ code: 0 });
    expect(lines(log)).toEqual([expect.stringMatching(/^start r /), 'end r']);
  });

  it('a lost lock stops the command with SIGTERM, releases, and exits 122', async () => {
    const log = join(dir, 'lost.log');
    const proxy = new TcpProxy(zkPort());
    await proxy.start();
    try {
      const run = cli(['exec', 'sync', ...base(proxy.connectionString), ...job(log, 'l', 60_000)]);
      await waitUntil(() => lines(log).length > 0, 'the command to start');
      expect(await fixture.nodes('sync')).toHaveLength(1);

      // Cut off from ZooKeeper: past its session's deadline the CLI can no longer trust the lock.
      await proxy.stop();
      await waitUntil(() => lines(log).includes('term l'), 'the command to get SIGTERM', 20_000);
      await proxy.start(); // lets the CLI delete its node, if the session still lives, and close
      const lost = await run;
      expect(lost).toMatchObject({ code: 122, err: expect.stringContaining('stopping the command') });
      expect(lines(log).slice(1)).toEqual(['term l']);
      await waitUntil(() => noNodes('sync'), 'the lost holder node to go');
    } finally {
      await proxy.stop();
    }
  });

  it('--max-hold stops a hanging command: SIGTERM, SIGKILL after --kill-grace, exit 123, the lock released only once it is gone', async () => {
    const log = join(dir, 'hang.log');
    const run = cli([
      'exec',
      'hang',
      '--max-hold',
      '1000',
      '--kill-grace',
      '3000',
      ...base(),
      ...job(log, 'h', 60_000, 0, 'ignore-term'),
    ]);
    await waitUntil(() => lines(log).length > 0, 'the command to start');
    const pid = Number(lines(log)[0].split(' ')[2]);
    expect(await fixture.nodes('hang')).toHaveLength(1);
    // Told to stop, it ignores SIGTERM: still running in the grace, it still has the lock.
    await waitUntil(() => lines(log).includes('term h'), 'the command to get SIGTERM');
    expect(await fixture.nodes('hang')).toHaveLength(1);
    expect(process.kill(pid, 0)).toBe(true);

    expect(await run).toMatchObject({ code: 123, err: expect.stringContaining('--max-hold 1000 ms') });
    expect(lines(log).slice(1)).toEqual(['term h']); // told, ignored it, killed: never ended
    expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
    expect(await noNodes('hang')).toBe(true);
  });

  it('passes SIGINT on to the command: killed by it, the CLI exits 130 as shells do, and releases', async () => {
    const log = join(dir, 'interrupted.log');
    const run = cli(['exec', 'interrupted', ...base(), ...job(log, 'i', 60_000)]);
    await waitUntil(() => lines(log).length > 0, 'the command to start');
    const pid = Number(lines(log)[0].split(' ')[2]);
    process.kill(run.pid, 'SIGINT');
    expect(await run).toMatchObject({ code: 130 });
    expect(lines(log)).toHaveLength(1); // no end, no term: SIGINT's default action ended it
    expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
    expect(await noNodes('interrupted')).toBe(true);
  });

  it('a command that cannot be run: 127 not found, 126 not executable, as shells say; the lock released', async () => {
    const missing = await cli(['exec', 'broken', ...base(), '--', join(dir, 'no-such-command')]);
    expect(missing).toMatchObject({ code: 127, err: expect.stringContaining('cannot run') });
    const notExecutable = await cli(['exec', 'broken', ...base(), '--', dir]);
    expect(notExecutable).toMatchObject({ code: 126, err: expect.stringContaining('cannot run') });
    expect(await noNodes('broken')).toBe(true);
  });
});
