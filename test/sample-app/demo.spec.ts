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

/** `npm run demo -- --short`, without npm, with a ZooKeeper and a PostgreSQL of its own (no ZK_CONNECT, no DATABASE_URL). */
function runShortDemo(): Promise<DemoRun> {
  const env = { ...process.env };
  delete env.ZK_CONNECT;
  delete env.DATABASE_URL;
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      ['-r', './scripts/ts-register.cjs', 'sample-app/demo/demo.ts', '--short'],
      { cwd: ROOT, env, timeout: 130_000 },
      (_error, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }),
    );
  });
}

/** The summary's tables (sales, transfers, payments, zombie), each as its rows keyed by column header. */
function tables(stdout: string): Record<string, string>[][] {
  const cells = (line: string): string[] =>
    line
      .slice(1, -1)
      .split('|')
      .map((cell) => cell.trim());
  const blocks: string[][] = []; // runs of consecutive table lines
  stdout.split('\n').forEach((line, i, lines) => {
    if (!line.startsWith('|')) return;
    if (!lines[i - 1]?.startsWith('|')) blocks.push([]);
    blocks[blocks.length - 1].push(line);
  });
  return blocks.map((lines) => {
    const header = cells(lines[0]);
    return lines.slice(2).map((line) => Object.fromEntries(cells(line).map((cell, i) => [header[i], cell])));
  });
}

const TIMINGS = ['wait p50 ms', 'wait p99 ms', 'hold p50 ms', 'hold p99 ms'];

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
  }, 140_000);

  it('exits with 0 and prints a table for each scenario', () => {
    if (run.code !== 0) console.error(run.stdout, run.stderr);
    expect(run.code).toBe(0);
    const [sales, transfers, payments, zombie] = tables(run.stdout);
    expect(sales.map((row) => row.endpoint)).toEqual(['locked', 'unlocked (control)']);
    expect(Object.keys(sales[0])).toEqual([
      'endpoint',
      'requests',
      'sold/expected',
      'lost updates',
      'not 201',
      ...TIMINGS,
    ]);
    expect(transfers.map((row) => row.endpoint)).toEqual(['both locks', 'unlocked (control)']);
    expect(Object.keys(transfers[0])).toEqual([
      'endpoint',
      'transfers',
      'moved',
      'seats before',
      'seats after',
      'expected after',
      'not 201',
      ...TIMINGS,
    ]);
    expect(payments.map((row) => row.endpoint)).toEqual(['leased', 'unlimited (control)']);
    expect(Object.keys(payments[0])).toEqual([
      'endpoint',
      'charges',
      'charged',
      'not 201',
      'partner peak/limit',
      'partner 429s',
      ...TIMINGS,
    ]);
    expect(zombie.map((row) => row.write)).toEqual(['fenced', 'unfenced (control)']);
    expect(Object.keys(zombie[0])).toEqual([
      'write',
      'sales',
      'writes landed',
      'writes refused (409)',
      'seats sold',
      'sales lost',
    ]);
  });

  it('loses no update under the lock, and says what the unlocked control lost', () => {
    const [locked, unlocked] = tables(run.stdout)[0];
    expect(locked).toMatchObject({ requests: '60', 'sold/expected': '60/60', 'lost updates': '0', 'not 201': '0' });
    expect(Number(locked['wait p99 ms'])).toBeGreaterThanOrEqual(Number(locked['wait p50 ms']));
    expect(Number(locked['hold p50 ms'])).toBeGreaterThan(0);
    expect(run.stdout).toContain('locked: 60 reservations confirmed, 60 seats sold, no update lost.');
    const lost = Number(unlocked['lost updates']);
    expect(unlocked['sold/expected']).toBe(`${60 - lost}/60`);
    expect(run.stdout).toContain(
      lost > 0 ? `${lost} updates lost to concurrent read-modify-writes` : 'lost no update this time',
    );
  });

  it('shows strictly increasing fencing tokens', () => {
    expect(run.stdout).toMatch(
      /^fencing: 60 fencing tokens, in the order the store recorded them, strictly increase: \d+ … \d+\.$/m,
    );
  });

  it('moves seats both ways under both locks without deadlock or a seat astray, and says what the control did', () => {
    const [locked, unlocked] = tables(run.stdout)[1];
    expect(locked).toMatchObject({
      transfers: '8',
      moved: '8',
      'seats before': '40 + 40',
      'seats after': '40 + 40',
      'expected after': '40 + 40',
      'not 201': '0',
    });
    expect(Number(locked['hold p50 ms'])).toBeGreaterThan(0);
    expect(run.stdout).toContain(
      'transfers: 8 confirmed, half of them each way, from 3 instances at once: no deadlock, and the shows hold 40 + 40 seats as expected.',
    );
    const astray = unlocked['seats after'] !== unlocked['expected after'];
    expect(run.stdout).toContain(
      astray
        ? `the shows hold ${unlocked['seats after']} seats, not ${unlocked['expected after']}`
        : 'no seat went astray this time',
    );
  });

  it('keeps the partner within its limit under the lease, and says how the control overloaded it', () => {
    const [leased, unlimited] = tables(run.stdout)[2];
    expect(leased).toMatchObject({ charges: '9', charged: '9', 'not 201': '0', 'partner 429s': '0' });
    expect(['1/3', '2/3', '3/3']).toContain(leased['partner peak/limit']);
    expect(run.stdout).toMatch(
      /^payments: 9 charged, at most [123] at the partner at once \(its limit is 3\), none refused\.$/m,
    );
    const refused = Number(unlimited['partner 429s']);
    expect(Number(unlimited.charged) + Number(unlimited['not 201'])).toBe(9);
    expect(run.stdout).toContain(refused > 0 ? `${refused} refused with 429` : 'the partner refused nothing this time');
  });

  it("refuses a zombie's write in PostgreSQL through the fence, and shows the unfenced control's overwrite", () => {
    const [fenced, unfenced] = tables(run.stdout)[3];
    // 3 sales by the next holder, and the zombie's, whose token is stale once they wrote.
    expect(fenced).toMatchObject({
      sales: '4',
      'writes landed': '3',
      'writes refused (409)': '1',
      'seats sold': '3',
      'sales lost': '0',
    });
    expect(run.stdout).toContain(
      "fenced: PostgreSQL refused the zombie's write (409 STALE_FENCING_TOKEN): a newer holder had written; 3 sales landed, 3 seats sold, none lost.",
    );
    expect(unfenced).toMatchObject({
      sales: '4',
      'writes landed': '4',
      'writes refused (409)': '0',
      'seats sold': '3',
      'sales lost': '1',
    });
    const control =
      /^unfenced \(control\): the zombie's write landed over a newer holder's sale: seat 1 is the zombie's \(token (\d+); the next holder's was (\d+)\)/m.exec(
        run.stdout,
      );
    expect(control).not.toBeNull();
    expect(BigInt(control![1])).toBeLessThan(BigInt(control![2]));
  });

  it('stops what it started: instances exit 0 on SIGTERM, ZooKeeper, PostgreSQL, the partner and the store are gone', async () => {
    expect(run.stdout).toContain('instances stopped by SIGTERM: a exit 0, b exit 0, c exit 0.');
    const zkPort = Number(/^ZooKeeper 127\.0\.0\.1:(\d+); store (.+)$/m.exec(run.stdout)?.[1]);
    const store = /^ZooKeeper .+; store (.+)$/m.exec(run.stdout)?.[1];
    const appPorts = [.../^instances (.+)$/m.exec(run.stdout)![1].matchAll(/http:\/\/127\.0\.0\.1:(\d+)/g)].map((m) =>
      Number(m[1]),
    );
    const partnerPort = Number(/^payment partner http:\/\/127\.0\.0\.1:(\d+)/m.exec(run.stdout)?.[1]);
    const pgPort = Number(/^PostgreSQL postgres:\/\/postgres@127\.0\.0\.1:(\d+)\//m.exec(run.stdout)?.[1]);
    expect(appPorts).toHaveLength(3);
    expect(await Promise.all([zkPort, pgPort, partnerPort, ...appPorts].map(refused))).toEqual(Array(6).fill(true));
    expect(store && existsSync(store)).toBe(false);
  });
});
