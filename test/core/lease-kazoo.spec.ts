import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';

import { LockKindMismatchError } from '../../lib/core/errors/errors';
import { LockFixture } from '../support/lock-fixture';
import { zkConnect } from '../support/zk-test-env';

const PYTHON = '/usr/bin/python3'; // Debian's, with python3-kazoo (2.8)

/** Kazoo 2.8's `Semaphore`, driven by JSON lines (the lock worker in test/interop has no semaphore). */
const WORKER = `
import json, sys
from kazoo.client import KazooClient
client = KazooClient(hosts=sys.argv[1], timeout=10)
client.start()
held = {}
def answer(**fields):
    sys.stdout.write(json.dumps(fields) + "\\n"); sys.stdout.flush()
answer(ready=True)
for line in sys.stdin:
    command = json.loads(line)
    op = command["op"]
    try:
        if op == "quit":
            break
        if op == "acquire":
            semaphore = client.Semaphore(command["path"], identifier="kazoo-worker", max_leases=command["max"])
            got = semaphore.acquire(blocking=False)
            if got:
                held[command["path"]] = semaphore
            answer(acquired=bool(got))
        elif op == "release":
            held.pop(command["path"]).release()
            answer(released=True)
        elif op == "holders":
            answer(holders=client.Semaphore(command["path"], max_leases=command["max"]).lease_holders())
    except Exception as error:
        answer(error=f"{type(error).__name__}: {error}")
for semaphore in held.values():
    semaphore.release()
client.stop()
client.close()
`;

class KazooSemaphores {
  private readonly answers: Array<(line: string) => void> = [];
  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    createInterface({ input: child.stdout }).on('line', (line) => this.answers.shift()?.(line));
  }

  static async start(connectionString: string): Promise<KazooSemaphores> {
    if (!existsSync(PYTHON)) throw new Error(`${PYTHON} is missing: apt-get install -y python3-kazoo`);
    const worker = new KazooSemaphores(spawn(PYTHON, ['-c', WORKER, connectionString], { stdio: 'pipe' }));
    const ready = await worker.next();
    if (!ready.ready) throw new Error('the Kazoo worker did not start');
    return worker;
  }

  async send(command: Record<string, unknown>): Promise<Record<string, any>> {
    const reply = this.next();
    this.child.stdin.write(`${JSON.stringify(command)}\n`);
    return reply;
  }

  async stop(): Promise<void> {
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.stdin.end(`${JSON.stringify({ op: 'quit' })}\n`);
    await exited;
  }

  private next(): Promise<Record<string, any>> {
    return new Promise((resolve) => this.answers.push((line) => resolve(JSON.parse(line))));
  }
}

/**
 * Kazoo's Semaphore and this library's leases cannot share a semaphore (see the report's
 * README section): Kazoo's acquirers check a count and then create, safe only because all
 * of them hold the sibling lock "<path>-__lock__" meanwhile. So neither may silently join
 * the other's semaphore: our calls refuse Kazoo's layout with a typed error.
 */
describe("leases and Kazoo 2.8's Semaphore", () => {
  let fx: LockFixture;
  let kazoo: KazooSemaphores;
  beforeAll(async () => {
    fx = await LockFixture.create('lease-kazoo');
    kazoo = await KazooSemaphores.start(zkConnect());
  });
  afterAll(async () => {
    await kazoo.stop();
    await fx.cleanup();
  });

  it('our calls refuse a Kazoo semaphore, held or idle, and leave it as it was', async () => {
    const [ours] = await fx.many(1, { removeEmptyDirectories: false });
    const path = ours.pathOf('kazoo-pool');
    expect(await kazoo.send({ op: 'acquire', path, max: 2 })).toEqual({ acquired: true });
    expect(await fx.inspector.data(path)).toBe('2'); // Kazoo's count, bare
    const tree = await fx.tree();
    const creates = ours.client.counter.snapshot().create ?? 0;

    const error = await ours.acquireLease('kazoo-pool', { maxLeases: 2 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockKindMismatchError);
    expect(error).toMatchObject({ requested: 'lease', found: 'kazoo-semaphore', maxLeases: 2 });
    await expect(ours.acquire('kazoo-pool', { timeoutMs: 0 })).rejects.toMatchObject({
      requested: 'lock',
      found: 'kazoo-semaphore',
    });
    await expect(ours.leaseContenders('kazoo-pool')).rejects.toBeInstanceOf(LockKindMismatchError);
    await expect(ours.contenders('kazoo-pool')).rejects.toBeInstanceOf(LockKindMismatchError);
    expect(ours.client.counter.snapshot().create ?? 0).toBe(creates + 1); // the lock call's own node, deleted again
    expect(await fx.tree()).toEqual(tree);

    await kazoo.send({ op: 'release', path });
    expect(await fx.nodes('kazoo-pool')).toEqual([]); // idle now, and still refused: its data says Kazoo
    await expect(ours.acquireLease('kazoo-pool', { maxLeases: 2 })).rejects.toMatchObject({ found: 'kazoo-semaphore' });
  });

  it('Kazoo cannot tell our semaphore from its own (it ignores data it cannot parse); our next call then refuses it', async () => {
    const [a, b] = await fx.many(2);
    const path = a.pathOf('our-pool');
    const held = await a.acquireLease('our-pool', { maxLeases: 2 });
    // Kazoo takes a lease with any count: it counts our node as one of its own leases.
    expect(await kazoo.send({ op: 'acquire', path, max: 5 })).toEqual({ acquired: true });
    expect((await kazoo.send({ op: 'holders', path, max: 5 })).holders.sort()).toEqual(
      [a.options.identity, 'kazoo-worker'].sort(),
    );
    const tree = await fx.tree();
    await expect(b.acquireLease('our-pool', { maxLeases: 2, timeoutMs: 10_000 })).rejects.toMatchObject({
      name: 'LockKindMismatchError',
      found: 'kazoo-semaphore',
    });
    await expect(b.leaseContenders('our-pool')).rejects.toMatchObject({ found: 'kazoo-semaphore' });
    expect(await fx.tree()).toEqual(tree);
    await kazoo.send({ op: 'release', path });
    await held.release();
  });
});
