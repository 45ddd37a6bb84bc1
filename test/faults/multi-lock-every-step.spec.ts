import { createServer, connect, type Server, type Socket } from 'node:net';

import { LockTimeoutError, type MultiLockHandle, type ZkLockBackend, type ZkLockHandle } from '../../lib/index';
import { LockFixture, nodeOf } from '../support/lock-fixture';
import type { ProxiedRequest } from '../support/tcp-proxy';
import { waitFor } from '../support/wait-for';
import { waitUntil } from '../support/wait-until';
import { zkPort } from '../support/zk-test-env';

type When = 'before' | 'after';

/**
 * A loopback proxy that cuts the connection at the n-th lock request (a request on a path
 * under `root`: pings, heartbeats and barriers do not count) after `arm(n, when)`: before
 * it leaves (the server never sees it), or once the server has answered it (the client
 * never hears the answer). From the cut request on, nothing more passes either way.
 */
class StepCutProxy {
  private server: Server | undefined;
  private readonly links = new Set<{ client: Socket; server: Socket }>();
  private armed: { step: number; when: When; seen: number; cut: (request: StepRequest) => void } | undefined;
  port = 0;

  constructor(private readonly root: string) {}

  get connectionString(): string {
    return `127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const server = (this.server = createServer((client) => this.accept(client)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.port = (server.address() as { port: number }).port;
  }

  /** Resolves with the request cut, once the connection is cut. */
  arm(step: number, when: When): Promise<StepRequest> {
    return new Promise((cut) => (this.armed = { step, when, seen: 0, cut }));
  }

  async stop(): Promise<void> {
    for (const link of this.links) this.close(link);
    const server = this.server;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    const link = { client, server: connect({ host: '127.0.0.1', port: zkPort() }) };
    this.links.add(link);
    let fromClient = Buffer.alloc(0);
    let fromServer = Buffer.alloc(0);
    let connected = false;
    let awaitedXid: number | undefined; // the cut request's, once sent: close on its answer
    let fourLetter = false; // the library asking the server's version (`srvr`): passed on as is
    client.on('data', (chunk) => {
      if (!connected && fromClient.length === 0 && /^[a-z]{4}$/.test(chunk.toString('latin1', 0, 4))) fourLetter = true;
      if (fourLetter) return void link.server.write(chunk);
      fromClient = Buffer.concat([fromClient, chunk]);
      for (let frame; (frame = takeFrame(fromClient));) {
        fromClient = fromClient.subarray(frame.length);
        if (awaitedXid !== undefined) return; // cut: nothing more passes
        const request = connected ? requestOf(frame) : undefined;
        connected = true;
        const armed = this.armed;
        if (request?.path?.startsWith(`${this.root}/`) && armed && ++armed.seen === armed.step) {
          this.armed = undefined;
          if (armed.when === 'before') return this.close(link, () => armed.cut(request));
          link.server.write(frame);
          awaitedXid = frame.readInt32BE(4);
          link.server.removeAllListeners('data');
          link.server.on('data', (data: Buffer) => {
            fromServer = Buffer.concat([fromServer, data]);
            for (let reply; (reply = takeFrame(fromServer));) {
              fromServer = fromServer.subarray(reply.length);
              if (reply.length >= 8 && reply.readInt32BE(4) === awaitedXid)
                return this.close(link, () => armed.cut(request));
            }
          });
          return;
        }
        link.server.write(frame);
      }
    });
    link.server.on('data', (data) => client.write(data));
    for (const socket of [client, link.server]) {
      socket.on('error', () => this.close(link));
      socket.on('close', () => this.close(link));
    }
  }

  private close(link: { client: Socket; server: Socket }, then?: () => void): void {
    if (this.links.delete(link)) {
      link.client.destroy();
      link.server.destroy();
    }
    then?.();
  }
}

/** The first whole length-prefixed frame of `buffer`, if there is one. */
function takeFrame(buffer: Buffer): Buffer | undefined {
  if (buffer.length < 4) return undefined;
  const size = buffer.readInt32BE(0);
  return buffer.length < 4 + size ? undefined : buffer.subarray(0, 4 + size);
}

/** A request: its op, the path of ops whose body starts with one, and a multi's ops (`create a`; a multiRead's: `a`). */
type StepRequest = ProxiedRequest & { readonly ops?: string[] };

/** A request frame's op and, for ops whose body starts with one, its path; a multi's first path and its ops. */
function requestOf(frame: Buffer): StepRequest {
  const op = frame.readInt32BE(8);
  if (op === MULTI || op === MULTI_READ) return multiOf(frame);
  if (![1, 2, 3, 4, 12].includes(op) || frame.length < 16) return { op };
  return { op, path: frame.toString('utf8', 16, 16 + frame.readInt32BE(12)) };
}

/**
 * A multi or multiRead frame: after the request header, per op a header (type, done, err)
 * and the op's body; creates and deletes, or children and data reads (a multiRead's ops
 * are its directories, each once).
 */
function multiOf(frame: Buffer): StepRequest {
  const ops: Array<{ op: number; path: string }> = [];
  let at = 12;
  const string = (): string => {
    const length = frame.readInt32BE(at);
    at += 4 + Math.max(0, length);
    return frame.toString('utf8', at - Math.max(0, length), at);
  };
  for (;;) {
    const type = frame.readInt32BE(at);
    const done = frame.readUInt8(at + 4) !== 0;
    at += 9;
    if (done) break;
    const path = string();
    if (type === 1) {
      string(); // data
      const acls = frame.readInt32BE(at);
      at += 4;
      for (let i = 0; i < acls; i++) {
        at += 4; // perms
        string(); // scheme
        string(); // id
      }
      at += 4; // flags
    } else if (type === 2)
      at += 4; // a delete's version
    else at += 1; // a read's watch flag
    ops.push({ op: type, path });
  }
  const op = frame.readInt32BE(8);
  if (op === MULTI_READ)
    return { op, path: ops[0]?.path, ops: [...new Set(ops.map(({ path }) => path.split('/').at(-1)!))] };
  return { op, path: ops[0]?.path, ops: ops.map(({ op, path }) => `${OPS[op]} ${path.split('/').at(-2)}`) };
}

// The lock requests of acquireAll([a, b, c]) while another client holds b, with every
// directory in place: the first wave (the creates of a, b and c as one multi, their reads
// right behind it as one multiRead), the try on b withdrawn, c given back, the wait for b (create, read,
// watch the holder's node); once the holder goes, the read that sees it, the rest tried
// again (c alone: a plain create); then the release, one multi. On timeout instead, the
// node queued on b is deleted, then a's.
const GRANTED = [
  'multi create a, create b, create c',
  'multiread a, b, c',
  'delete b',
  'delete c',
  'create b',
  'read b',
  'watch b',
  'read b',
  'create c',
  'read c',
  'multi delete a, delete b, delete c',
];
/** The steps of the acquire; the last one is the release. */
const ACQUIRING = GRANTED.length - 1;
const TIMED_OUT = [...GRANTED.slice(0, 7), 'delete b', 'delete a'];
const MULTI = 14;
const MULTI_READ = 22;
const OPS: Record<number, string> = { 1: 'create', 2: 'delete', 4: 'watch', 12: 'read' };
/** `[step, request]` pairs, steps counted from 1. */
const steps = (requests: string[]): Array<[number, string]> => requests.map((request, i) => [i + 1, request]);

describe('a connection cut at every request of a 3-name acquireAll', () => {
  let fx: LockFixture;
  let proxy: StepCutProxy;
  let direct: ZkLockBackend;
  let client: ZkLockBackend;
  const [a, b, c] = ['a', 'b', 'c'];
  const counts = (): Promise<number[]> =>
    Promise.all([a, b, c].map(async (name) => (await fx.nodes(name, direct))?.length ?? 0));
  const same = (x: number[], y: number[]): boolean => JSON.stringify(x) === JSON.stringify(y);

  beforeAll(async () => {
    fx = await LockFixture.create('multi-every-step');
    proxy = new StepCutProxy(fx.rootPath);
    await proxy.start();
    // Directories stay (a long grace), so every run sends the same requests.
    direct = await fx.backend({ emptyDirectoryGraceMs: 60_000 });
    client = await fx.backend({ connectionString: proxy.connectionString, emptyDirectoryGraceMs: 60_000 });
    await (await direct.acquireAll([a, b, c])).release();
    await client.client.liveSession().readyToReadTogether(); // the server said it takes a multiRead
  });
  afterAll(async () => {
    try {
      await fx.cleanup();
    } finally {
      await proxy.stop(); // even when the clean-up fails: its error is then the one reported
    }
  });

  /** Starts a 3-name acquire with the cut armed at `step`; resolves once the client waits for b. */
  async function startCut(step: number, when: When, timeoutMs: number) {
    const blocker = await direct.acquire(b);
    const sessionId = client.client.session.id;
    let cutRequest: StepRequest | undefined;
    void proxy.arm(step, when).then((request) => (cutRequest = request));
    const pending = client.acquireAll([c, b, a], { timeoutMs });
    pending.catch(() => undefined);
    return { blocker, sessionId, pending, cut: () => waitFor(() => cutRequest, { what: `the cut at step ${step}` }) };
  }

  /** `op name`, e.g. `create b`, of a request cut. */
  const describeRequest = (request: StepRequest): string =>
    request.ops
      ? `${request.op === MULTI_READ ? 'multiread' : 'multi'} ${request.ops.join(', ')}`
      : `${OPS[request.op] ?? request.op} ${request.path!.slice(fx.rootPath.length + 1).split('/')[0]}`;

  /** After all: no node anywhere but the blocker's, the same session, no watch left. */
  async function expectNothingLeft(sessionId: string): Promise<void> {
    expect(await counts()).toEqual([0, 0, 0]);
    expect(client.client.session.id).toBe(sessionId);
    expect(client.client.session.watcherCount()).toBe(0);
  }

  describe.each<When>(['before', 'after'])('cut %s the request', (when) => {
    it.each(steps(GRANTED))('step %i (%s): granted, then exactly one node per name; released, none', async (step) => {
      const run = await startCut(step, when, 20_000);
      // Waiting for b: a held, one node of ours queued on b, nothing on c.
      await waitUntil(
        async () => client.client.session.watcherCount() === 1 && same(await counts(), [1, 2, 0]),
        'the client to wait for b',
      );
      await run.blocker.release();
      const group: MultiLockHandle = await run.pending;
      if (step <= ACQUIRING) expect(describeRequest(await run.cut())).toBe(GRANTED[step - 1]); // cut while acquiring
      expect(group.isHeld()).toBe(true);
      for (const [i, name] of [a, b, c].entries()) {
        expect(await fx.nodes(name, direct)).toEqual([nodeOf(group.handles[i] as ZkLockHandle)]);
        expect(await direct.tryAcquire(name)).toBeNull(); // one holder
      }
      await group.release();
      expect(describeRequest(await run.cut())).toBe(GRANTED[step - 1]);
      await waitUntil(async () => same(await counts(), [0, 0, 0]), 'every node to go');
      await expectNothingLeft(run.sessionId);
    });

    it.each(steps(TIMED_OUT))('step %i (%s): on timeout, no node left and nothing held', async (step) => {
      const run = await startCut(step, when, 600);
      const error = await run.pending.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockTimeoutError);
      expect(describeRequest(await run.cut())).toBe(TIMED_OUT[step - 1]);
      // A delete whose reply was cut is finished by the reaper after reconnecting.
      await waitUntil(async () => same(await counts(), [0, 1, 0]), 'only the blocker to be left');
      expect(await fx.nodes(b, direct)).toEqual([nodeOf(run.blocker)]);
      await run.blocker.release();
      await expectNothingLeft(run.sessionId);
    });
  });
});

// A group over 512 KiB of creates goes as several multis (`MAX_REQUEST_BYTES`): the second
// one cut is recovered as a lone multi is, while the first one's nodes stay theirs.
describe('a connection cut at the second multi of a group too large for one', () => {
  let fx: LockFixture;
  let proxy: StepCutProxy;
  let client: ZkLockBackend;
  // 600 names of 1,024 characters: about 660 KB of creates, two multis.
  const names = Array.from({ length: 600 }, (_, i) => `${String(i).padStart(3, '0')}${'m'.repeat(1021)}`);
  const counts = (): Promise<number[]> => Promise.all(names.map(async (name) => (await fx.nodes(name))?.length ?? 0));

  beforeAll(async () => {
    fx = await LockFixture.create('multi-cut-batches');
    proxy = new StepCutProxy(fx.rootPath);
    await proxy.start();
    client = await fx.backend({ connectionString: proxy.connectionString, emptyDirectoryGraceMs: 60_000 });
    // Every directory in place, so the creates all go in the group's two multis.
    await fx.inspector.create(fx.rootPath);
    await Promise.all(names.map((name) => fx.inspector.create(client.pathOf(name))));
    await client.client.liveSession().readyToReadTogether();
  });
  afterAll(async () => {
    try {
      await fx.cleanup();
    } finally {
      await proxy.stop(); // even when the clean-up fails: its error is then the one reported
    }
  });

  it.each<When>(['before', 'after'])(
    'cut %s it: granted, exactly one node per name, the same session; released, none',
    async (when) => {
      const sessionId = client.client.session.id;
      const cut = proxy.arm(2, when);
      const group = await client.acquireAll(names, { timeoutMs: 20_000 });
      const request = await cut;
      expect(request.op).toBe(MULTI); // the second multi of creates
      expect(request.ops?.length).toBeLessThan(names.length);
      expect(request.ops?.every((op) => op.startsWith('create '))).toBe(true);
      expect(group.handles.every((handle) => handle.isHeld())).toBe(true);
      const nodes = await Promise.all(names.map((name) => fx.nodes(name)));
      expect(nodes).toEqual(group.handles.map((handle) => [nodeOf(handle as ZkLockHandle)]));
      await group.release();
      await waitUntil(async () => (await counts()).every((count) => count === 0), 'every node to go');
      expect(client.client.session.id).toBe(sessionId);
    },
  );
});
