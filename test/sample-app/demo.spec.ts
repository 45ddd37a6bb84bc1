import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

interface DemoRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `npm run demo -- --short`, without npm, and with a ZooKeeper of its own (no ZK_CONNECT). */
function runShortDemo(): Promise<DemoRun> {
  const env = { ...process.env };
  delete env.ZK_CONNECT;
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      ['-r', './scripts/ts-register.cjs', 'sample-app/demo/demo.ts', '--short'],
      { cwd: ROOT, env, timeout: 110_000 },
      (_error, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }),
    );
  });
}

/** The rows of the summary table, keyed by column header. */
function tableRows(stdout: string): Record<string, string>[] {
  const lines = stdout.split('\n').filter((line) => line.startsWith('|'));
  const cells = (line: string): string[] => line.slice(1, -1).split('|').map((cell) => cell.trim());
  const header = cells(lines[0] ?? '|');
  return lines.slice(2).map((line) => Object.fromEntries(cells(line).map((cell, i) => [header[i], cell])));
}

const refused = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(false)));
    socket.once('error', () => resolve(true));
  });

describe('npm run demo -- --short', () => {
  let run: DemoRun;
  beforeAll(async () => {
    run = await runShortDemo();
  }, 120_000);

  it('exits with 0 and prints the summary table', () => {
    if (run.code !== 0) console.error(run.stdout, run.stderr);
    expect(run.code).toBe(0);
    const rows = tableRows(run.stdout);
    expect(rows.map((row) => row.endpoint)).toEqual(['locked', 'unlocked (control)']);
    expect(Object.keys(rows[0])).toEqual(['endpoint', 'requests', 'sold/expected', 'lost updates', 'not 201', 'wait p50 ms', 'wait p99 ms', 'hold p50 ms', 'hold p99 ms']);
  });

  it('loses no update under the lock, and says what the unlocked control lost', () => {
    const [locked, unlocked] = tableRows(run.stdout);
    expect(locked).toMatchObject({ requests: '60', 'sold/expected': '60/60', 'lost updates': '0', 'not 201': '0' });
    expect(Number(locked['wait p99 ms'])).toBeGreaterThanOrEqual(Number(locked['wait p50 ms']));
    expect(Number(locked['hold p50 ms'])).toBeGreaterThan(0);
    expect(run.stdout).toContain('locked: 60 reservations confirmed, 60 seats sold, no update lost.');
    const lost = Number(unlocked['lost updates']);
    expect(unlocked['sold/expected']).toBe(`${60 - lost}/60`);
    expect(run.stdout).toContain(lost > 0 ? `${lost} updates lost to concurrent read-modify-writes` : 'lost no update this time');
  });

  it('shows strictly increasing fencing tokens', () => {
    expect(run.stdout).toMatch(/^fencing: 60 fencing tokens, in the order the store recorded them, strictly increase: \d+ … \d+\.$/m);
  });

  it('stops what it started: instances exit 0 on SIGTERM, ZooKeeper and the store are gone', async () => {
    expect(run.stdout).toContain('instances stopped by SIGTERM: a exit 0, b exit 0, c exit 0.');
    const zkPort = Number(/^ZooKeeper 127\.0\.0\.1:(\d+); store (.+)$/m.exec(run.stdout)?.[1]);
    const store = /^ZooKeeper .+; store (.+)$/m.exec(run.stdout)?.[1];
    const appPorts = [...run.stdout.matchAll(/http:\/\/127\.0\.0\.1:(\d+)/g)].map((m) => Number(m[1]));
    expect(appPorts).toHaveLength(3);
    expect(await Promise.all([zkPort, ...appPorts].map(refused))).toEqual([true, true, true, true]);
    expect(store && existsSync(store)).toBe(false);
  });
});
