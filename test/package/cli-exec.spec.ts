import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

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

/**
 * A worker that `sh -c` starts, a grandchild of exec: appends `start <id> <t> <pid> <peer>`,
 * then `beat <id> <t>` every 50 ms while it works and `end <id> <t>` after `holdMs`; on
 * SIGTERM `term <id> <t>`, then it exits `onTerm` ms later (working on meanwhile), or never
 * with `ignore-term`; on SIGINT `int <id> <t>`, and it exits 300 ms later (a second SIGINT
 * would be seen). The start line ends with `tty`, or why /dev/tty could not be opened. `<t>` is the time in ms (shared by every process of the machine);
 * `<peer>` is the state of process `peer` at the start (`gone`, or its /proc state: a peer
 * of another exec's group must be gone by then).
 */
const WORKER = `
const [log, id, holdMs, onTerm, peer] = process.argv.slice(1);
const { appendFileSync, readFileSync } = require('node:fs');
const now = () => (performance.timeOrigin + performance.now()).toFixed(3);
const note = (line) => appendFileSync(log, line + '\\n');
const state = (pid) => { try { const stat = readFileSync('/proc/' + pid + '/stat', 'utf8'); return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]; } catch { return 'gone'; } };
process.on('SIGTERM', () => {
  note('term ' + id + ' ' + now());
  if (onTerm !== 'ignore-term') setTimeout(() => process.exit(0), Number(onTerm)); // its clean-up takes onTerm ms
});
process.on('SIGINT', () => { note('int ' + id + ' ' + now()); setTimeout(() => process.exit(0), 300); });
const tty = () => { try { require('node:fs').closeSync(require('node:fs').openSync('/dev/tty', 'r')); return 'tty'; } catch (error) { return error.code; } };
note('start ' + id + ' ' + now() + ' ' + process.pid + ' ' + (peer ? state(peer) : '-') + ' ' + tty());
setInterval(() => note('beat ' + id + ' ' + now()), 50);
setTimeout(() => { note('end ' + id + ' ' + now()); process.exit(0); }, Number(holdMs));
`;

/** A worker's line: what happened, to which worker, when; `pid` and `peer` on `start`. */
interface WorkerEvent {
  readonly event: string;
  readonly id: string;
  readonly t: number;
  readonly pid?: number;
  readonly peer?: string;
}

/** A process's state from /proc: undefined once it is gone; `Z` a zombie (it has exited, not reaped yet). */
function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}

/** Still running: neither gone nor a zombie (PID 1 may never reap an orphan). */
const lives = (pid: number): boolean => !['Z', 'X', undefined].includes(processState(pid));

/** A process's child processes (its main thread's: the one that spawns them), from /proc. */
const childrenOf = (pid: number): string[] =>
  readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean);

interface Run {
  readonly code: number | null;
  readonly err: string;
}

/** CLIs still running: a failed test's are killed, not left to keep Jest up. */
const running = new Set<ChildProcess>();

/**
 * `npx nestjs-zk-lock exec …`, the built bin, as a process of its own (`pid` to signal it,
 * `stderr()` for what it has printed so far).
 */
function cli(args: string[]): Promise<Run> & { readonly pid: number; stderr(): string } {
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
  return Object.assign(done, { pid: child.pid!, stderr: () => err });
}

/** Workers started by the tests: a failed test's are killed, not left running. */
const workers = new Set<number>();

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
  /**
   * `sh -c '"$@" & <then>'`: sh starts a WORKER in the background (its stdio not the CLI's,
   * so the CLI's stderr closes when the CLI exits), then runs `then` (`wait` for it, or `exit 5`).
   */
  const inGroup = (then: string, log: string, id: string, holdMs: number, onTerm = ''): string[] => [
    '--',
    'sh',
    '-c',
    `"$@" </dev/null >/dev/null 2>&1 & ${then}`,
    'sh',
    ...worker(log, id, holdMs, onTerm),
  ];
  const worker = (log: string, id: string, holdMs: number, onTerm = '', peer = ''): string[] => [
    process.execPath,
    '-e',
    WORKER,
    log,
    id,
    String(holdMs),
    onTerm,
    peer,
  ];
  const lines = (log: string): string[] => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []);
  const events = (log: string, id: string): WorkerEvent[] =>
    lines(log)
      .map((line) => line.split(' '))
      .filter(([, of]) => of === id)
      .map(([event, of, t, pid, peer]) => ({ event, id: of, t: Number(t), pid: pid ? Number(pid) : undefined, peer }));
  /** The pid of worker `id` once it has started (and it is killed after the test). */
  const started = async (log: string, id: string): Promise<number> => {
    await waitUntil(() => events(log, id).length > 0, `worker ${id} to start`);
    const pid = events(log, id)[0].pid!;
    workers.add(pid);
    return pid;
  };
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
    for (const pid of workers) {
      if (lives(pid)) process.kill(pid, 'SIGKILL');
      workers.delete(pid);
    }
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
    // In the CLI's words: the flag to raise, and the command that shows the holder.
    expect(timedOut.err).toContain('within --timeout 1500 ms');
    expect(timedOut.err).toContain('raise --timeout');
    expect(timedOut.err).toContain('nestjs-zk-lock show report');
    expect(timedOut.err).not.toMatch(/timeoutMs|contenders\(/);
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

  describe("the command's whole process group (sh -c and what it starts)", () => {
    it('--max-hold stops the background worker of `sh -c` too, before the lock is released: the next exec starts only once it is gone', async () => {
      const log = join(dir, 'group.log');
      const first = cli([
        'exec',
        'group',
        '--max-hold',
        '1500',
        '--kill-grace',
        '5000',
        ...base(),
        ...inGroup('wait', log, 'a', 6000, '1000'), // on SIGTERM, it cleans up for 1 s
      ]);
      const a = await started(log, 'a');
      const second = cli(['exec', 'group', ...base(), '--', ...worker(log, 'b', 0, '', String(a))]);
      await fixture.queued('group', 2);

      expect(await first).toMatchObject({ code: 123, err: expect.stringContaining('--max-hold 1500 ms') });
      expect(await second).toMatchObject({ code: 0 });
      const ofA = events(log, 'a');
      expect(ofA.map(({ event }) => event)).toContain('term'); // told to stop, with sh
      expect(ofA.map(({ event }) => event)).not.toContain('end');
      // When b started, a's worker was gone (or dead, not reaped), and it had done its last work before.
      const [startOfB] = events(log, 'b');
      expect(['gone', 'Z']).toContain(startOfB.peer);
      expect(Math.max(...ofA.map(({ t }) => t))).toBeLessThan(startOfB.t);
      expect(await noNodes('group')).toBe(true);
    });

    it("a worker that ignores SIGTERM gets SIGKILL after --kill-grace; until it is gone, sh's exit aside, the lock's node stays in ZooKeeper", async () => {
      const log = join(dir, 'stubborn.log');
      const run = cli([
        'exec',
        'stubborn',
        '--max-hold',
        '1000',
        '--kill-grace',
        '4000',
        ...base(),
        ...inGroup('wait', log, 'a', 60_000, 'ignore-term'),
      ]);
      const a = await started(log, 'a');
      await waitUntil(() => events(log, 'a').some(({ event }) => event === 'term'), 'the worker to get SIGTERM');
      // sh died of SIGTERM (exec, its parent, reaped it): only the worker is left, and it works on...
      await waitUntil(() => childrenOf(run.pid).length === 0, 'sh to go');
      const beats = events(log, 'a').length;
      await waitUntil(() => events(log, 'a').length > beats + 2, 'the worker to work on');
      expect(lives(a)).toBe(true);
      // ...so exec still holds the lock: its node is there, and it is the holder.
      expect(await fixture.nodes('stubborn')).toHaveLength(1);
      const [holder] = await fixture.backend().then((backend) => backend.contenders('stubborn'));
      expect(holder).toMatchObject({ holding: true, identity: expect.stringMatching(`^${hostname()}:${run.pid}:`) });

      expect(await run).toMatchObject({ code: 123 });
      expect(lives(a)).toBe(false);
      expect(events(log, 'a').map(({ event }) => event)).not.toContain('end');
      expect(await noNodes('stubborn')).toBe(true);
    });

    it('a group left with a zombie only (exited, never reaped) is gone: exec releases and exits', async () => {
      const log = join(dir, 'zombie.log');
      // The leader forks P; P forks Z, which exits at once, then P leaves the group (setsid) and
      // lives on without ever reaping Z: the group's one member is a zombie, which still answers
      // kill(-pgid, 0), as an orphan does under a PID 1 that never reaps.
      const script = [
        'import os, sys, time',
        'note = lambda line: open(sys.argv[1], "a").write(line + "\\n")',
        'if os.fork() == 0:',
        '    z = os.fork()',
        '    if z == 0: os._exit(0)',
        '    while open(f"/proc/{z}/stat").read().rsplit(")", 1)[1].split()[0] != "Z": time.sleep(0.01)',
        '    os.setsid()',
        '    for fd in (0, 1, 2): os.dup2(os.open("/dev/null", os.O_RDWR), fd)  # not the CLI\'s stderr',
        '    note(f"left {os.getpid()} {z}")',
        '    time.sleep(120)',
        '    os._exit(0)',
        'note(f"leader {os.getpid()}")',
        'while "left" not in open(sys.argv[1]).read(): time.sleep(0.01)',
      ].join('\n');
      const run = cli(['exec', 'zombie', ...base(), '--', '/usr/bin/python3', '-c', script, log]);
      await waitUntil(() => lines(log).some((line) => line.startsWith('left')), 'the group to be left with a zombie');
      const [, outside, zombie] = lines(log)
        .find((line) => line.startsWith('left'))!
        .split(' ')
        .map(Number);
      workers.add(outside);
      const leader = Number(
        lines(log)
          .find((line) => line.startsWith('leader'))!
          .split(' ')[1],
      );

      expect(await run).toMatchObject({ code: 0 });
      // Still a zombie of the command's group when exec exited, its parent alive outside the group.
      expect(processState(zombie)).toBe('Z');
      expect(readFileSync(`/proc/${zombie}/stat`, 'utf8').split(') ')[1].split(' ')[2]).toBe(String(leader));
      expect(lives(outside)).toBe(true);
      expect(await noNodes('zombie')).toBe(true);
    });

    it("a command that exits leaving a worker in its group: the lock is held until the worker is gone too, then exec exits with the command's code", async () => {
      const log = join(dir, 'linger.log');
      const first = cli(['exec', 'linger', ...base(), ...inGroup('exit 5', log, 'a', 2000)]);
      const a = await started(log, 'a');
      await waitUntil(() => first.stderr().includes('still running'), 'exec to say it waits for the worker');
      expect(first.stderr()).toContain(String(a));
      const second = cli(['exec', 'linger', ...base(), '--', ...worker(log, 'b', 0, '', String(a))]);
      await fixture.queued('linger', 2);
      expect(lives(a)).toBe(true); // the queue is as it was while the worker runs: exec holds, the other waits

      expect(await first).toMatchObject({ code: 5 });
      expect(await second).toMatchObject({ code: 0 });
      const ofA = events(log, 'a');
      expect(ofA.at(-1)!.event).toBe('end'); // left to finish its work, not stopped
      const [startOfB] = events(log, 'b');
      expect(['gone', 'Z']).toContain(startOfB.peer);
      expect(ofA.at(-1)!.t).toBeLessThan(startOfB.t);
      expect(await noNodes('linger')).toBe(true);
    });

    it("in a terminal: Ctrl-C reaches each process of the group once (through exec), Ctrl-Z is ignored, /dev/tty is not the command's", async () => {
      const log = join(dir, 'terminal.log');
      // As an operator runs it: a job-control shell on a pseudo-terminal puts exec in the
      // terminal's foreground group; the keys are typed once both workers have started.
      const driver = [
        'import json, os, pty, select, sys, time',
        'log = sys.argv[1]',
        'pid, fd = pty.fork()',
        'if pid == 0:',
        '    os.execvp("bash", ["bash", "-c", "set -m; \\"$@\\"", "bash"] + sys.argv[2:])',
        'out = b""',
        'deadline = time.time() + 30  # then the terminal hangs up: what was typed had no effect',
        'def read_until(done):',
        '    global out',
        '    while not done() and time.time() < deadline:',
        '        if not select.select([fd], [], [], 0.1)[0]: continue',
        '        try: out += os.read(fd, 4096)',
        '        except OSError: return',
        'def started(): return os.path.exists(log) and open(log).read().count("start ") == 2',
        'while not started() and time.time() < deadline: time.sleep(0.02)',
        'os.write(fd, b"\\x1a")',
        'read_until(lambda: b"SIGTSTP" in out)',
        'os.write(fd, b"\\x03")',
        'read_until(lambda: False)',
        'os.close(fd)',
        'print(json.dumps({"code": os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), "out": out.decode()}))',
      ].join('\n');
      // sh runs two workers: one in the background, one in front.
      const command = [process.execPath, join(ROOT, BIN), 'exec', 'terminal', ...base()];
      command.push(...inGroup('"$@"; wait', log, 'a', 60_000));
      const { stdout } = await promisify(execFile)('/usr/bin/python3', ['-c', driver, log, ...command]);
      const { code, out } = JSON.parse(stdout) as { code: number; out: string };

      expect(out).toContain('SIGTSTP (Ctrl-Z) ignored');
      expect(code).toBe(130); // sh was interrupted, as it is by Ctrl-C in a terminal
      const ofA = lines(log).filter((line) => line.split(' ')[1] === 'a');
      expect(ofA.filter((line) => line.startsWith('start'))).toEqual([
        expect.stringMatching(/ ENXIO$/),
        expect.stringMatching(/ ENXIO$/),
      ]);
      expect(ofA.filter((line) => line.startsWith('int'))).toHaveLength(2); // once each
      expect(await noNodes('terminal')).toBe(true);
    });

    it.each([
      ['SIGTERM', 143],
      ['SIGQUIT', 131], // Ctrl-\ in a terminal: it reaches only exec, which passes it on
    ] as const)("%s sent to exec reaches every process of the command's group, not only sh", async (signal, code) => {
      const log = join(dir, `forwarded-${signal}.log`);
      // sh runs the worker in the foreground (not exec'd: a command follows), so sh and the worker both hear
      // it; neither keeps the CLI's stderr open after the CLI.
      const run = cli([
        'exec',
        'forwarded',
        ...base(),
        '--',
        'sh',
        '-c',
        'exec </dev/null >/dev/null 2>&1; "$@"; exit $?',
        'sh',
        ...worker(log, 'a', 60_000),
      ]);
      const a = await started(log, 'a');
      process.kill(run.pid, signal);
      expect(await run).toMatchObject({ code });
      if (signal === 'SIGTERM') expect(events(log, 'a').map(({ event }) => event)).toContain('term');
      expect(lives(a)).toBe(false);
      expect(await noNodes('forwarded')).toBe(true);
    });

    it('ignores SIGTSTP (Ctrl-Z) while the command runs: exec stopped alone would let the lock go while the command runs on', async () => {
      const log = join(dir, 'suspended.log');
      const run = cli(['exec', 'suspended', ...base(), ...inGroup('wait', log, 'a', 60_000)]);
      const a = await started(log, 'a');
      process.kill(run.pid, 'SIGTSTP');
      await waitUntil(() => run.stderr().includes('SIGTSTP (Ctrl-Z) ignored'), 'exec to say it ignores SIGTSTP');
      // Still running, and still holding: it keeps its session alive while the worker works on.
      const beats = events(log, 'a').length;
      await waitUntil(() => events(log, 'a').length > beats + 2, 'the worker to work on');
      expect(processState(run.pid)).not.toBe('T');
      expect(await fixture.nodes('suspended')).toHaveLength(1);
      process.kill(run.pid, 'SIGTERM');
      expect(await run).toMatchObject({ code: 143 }); // sh died of it, and its worker with it
      expect(lives(a)).toBe(false);
      expect(await noNodes('suspended')).toBe(true);
    });
  });
});
