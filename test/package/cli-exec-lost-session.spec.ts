import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ensureBuilt } from '../support/fixture-app';
import { LockFixture } from '../support/lock-fixture';
import { TcpProxy } from '../support/tcp-proxy';
import { waitUntil } from '../support/wait-until';
import { zkPort } from '../support/zk-test-env';
import { isAlive } from '../support/is-alive';

const ROOT = join(__dirname, '..', '..');
const BIN = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).bin['nestjs-zk-lock'] as string;

/** A command that notes its pid, notes SIGTERM and ignores it: only SIGKILL ends it. */
const STUBBORN = `
const { appendFileSync } = require('node:fs');
const log = process.argv[1];
process.on('SIGTERM', () => appendFileSync(log, 'term\\n'));
appendFileSync(log, 'start ' + process.pid + '\\n');
setInterval(() => undefined, 1000);
`;

/**
 * `exec` whose session goes at risk (its link black-holed for less than the session
 * timeout) and recovers: the command is told to stop at the risk point, and the lock is
 * released only once it is gone, so nobody else is granted while it still runs.
 */
describe('nestjs-zk-lock exec: a lost lock whose session lives on', () => {
  let fixture: LockFixture;
  let dir: string;
  let proxy: TcpProxy;
  beforeAll(async () => {
    await ensureBuilt();
    fixture = await LockFixture.create('cli-exec-lost');
    dir = mkdtempSync(join(tmpdir(), 'cli-exec-lost-'));
    proxy = new TcpProxy(zkPort());
    await proxy.start();
  }, 240_000);
  afterAll(async () => {
    await proxy?.stop();
    await fixture?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the command ignoring SIGTERM keeps the lock until SIGKILL ends it after --kill-grace, though the session recovered', async () => {
    const log = join(dir, 'stubborn.log');
    const lines = (): string[] => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []);
    const args = ['exec', 'stubborn', '--connect', proxy.connectionString, '--root', fixture.rootPath];
    const cli = spawn(
      process.execPath,
      [join(ROOT, BIN), ...args, '--kill-grace', '8000', '--', process.execPath, '-e', STUBBORN, log],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    cli.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    const exited = new Promise<number | null>((resolve) => cli.on('close', resolve));
    let pid = 0;
    try {
      await waitUntil(() => lines().length > 0, 'the command to start');
      pid = Number(lines()[0].split(' ')[1]);
      const other = await fixture.backend();
      const [node] = (await fixture.nodes('stubborn'))!;
      const path = `${other.pathOf('stubborn')}/${node}`;
      const waiting = other.acquire('stubborn', { timeoutMs: 60_000 });
      await fixture.queued('stubborn', 2);
      // When the node goes, the command must be gone already.
      const commandAliveAtDelete = fixture.inspector.deletion(path).then(() => isAlive(pid));

      proxy.blackhole();
      await waitUntil(() => lines().includes('term'), 'the command to get SIGTERM at the risk point', 20_000);
      const healedAt = proxy.requests.length;
      proxy.heal();
      // The same session proves itself again (its writes are answered), and its node stays.
      await waitUntil(() => proxy.requests.length > healedAt + 2, 'the CLI to talk to ZooKeeper again');
      expect(isAlive(pid)).toBe(true);
      expect(await fixture.inspector.children(other.pathOf('stubborn'))).toContain(node);

      const lock = await waiting;
      expect(await commandAliveAtDelete).toBe(false);
      expect(await exited).toBe(122);
      expect(err).toContain('stopping the command');
      expect(lines()).toEqual([expect.stringMatching(/^start \d+$/), 'term']); // killed, never ended on its own
      await lock.release();
    } finally {
      if (cli.exitCode === null && cli.signalCode === null) cli.kill('SIGKILL');
      if (pid && isAlive(pid)) process.kill(pid, 'SIGKILL'); // a failed run's command, not left behind
      await exited;
      cli.stderr.destroy();
    }
  });
});
