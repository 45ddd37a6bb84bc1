import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';

import { LockService, ZK_LOCK_BACKEND, ZkLockModule, ZkServerRefusedError, type ZkLockBackend } from '../../lib/index';
import { CapturedLog } from '../support/captured-log';
import { TcpProxy } from '../support/tcp-proxy';
import { uniqueRoot, zkConnect, zkPort } from '../support/zk-test-env';
import { expireSession } from '../support/zookeeper/expire-session';
import { OldServerProxy } from '../support/zookeeper/old-server.proxy';
import { startAppBehindProxy } from './nest-fixture';

/** The session's life in the application's log: connect, disconnect, at risk, loss, a new session; never a password. */
describe('ZooKeeper session events in the Nest log (context ZkLock)', () => {
  const credentials = { username: 'billing', password: 's3cret-Pa55' };
  let proxy: TcpProxy;
  let app: INestApplication;
  const log = new CapturedLog();
  beforeAll(async () => {
    ({ app, proxy } = await startAppBehindProxy({}, { rootPath: uniqueRoot('session-log'), credentials }, log));
  });
  afterAll(async () => {
    await app?.close();
    await proxy?.stop();
  });
  const backend = (): ZkLockBackend => app.get(ZK_LOCK_BACKEND);
  const sessionId = (): string => `0x${backend().client.session.id}`;

  it('logs the connection with the server, session id and negotiated timeout', async () => {
    const line = await log.next('log', /^Connected to ZooKeeper/, 0);
    expect(line).toBe(
      `Connected to ZooKeeper at 127.0.0.1:${proxy.connectionString.split(':')[1]} (session ${sessionId()}, timeout 4000 ms).`,
    );
  });

  it('a server that does not answer conf: a debug line says it was not checked for a timeout of 2 × tickTime', async () => {
    const line = await log.next('debug', /did not say/, 0);
    expect(line).toMatch(/^ZooKeeper server 127\.0\.0\.1:\d+ did not say its tickTime \(conf\): not checked/);
  });

  it('a dropped connection: a warning, then connected again in the same session', async () => {
    const from = log.lines.length;
    const before = sessionId();
    proxy.drop();
    expect(await log.next('warn', /^Disconnected from ZooKeeper/, from)).toContain(`session ${before}`);
    expect(await log.next('log', /^Connected to ZooKeeper/, from)).toContain(`session ${before}`);
  });

  it('a silent server while a lock is held: at risk (warn), then trusted again once a proof comes back', async () => {
    const from = log.lines.length;
    // An idle session is not watched (nothing relies on its proof): something must be held.
    const lock = await backend().acquire('silent');
    // The server hears everything and the client nothing. A proof brings trust back only
    // until the session is given up, a fifth of the timeout after the risk: so the replies
    // come back on the event itself, the connect attempt under way with them. (A black
    // hole healed when the test sees the line loses that attempt's connect, and whether the
    // next one still comes in time is up to the timers of a loaded machine.)
    backend().client.once('at-risk', () => proxy.releaseReplies());
    proxy.holdReplies();
    const atRisk = await log.next('warn', /at risk: no proof for \d+ ms/, from);
    expect(atRisk).toContain(`session ${sessionId()}`);
    await log.next('log', /is trusted again/, from);
    expect(log.lines.slice(from).filter(([level]) => level === 'error')).toEqual([]); // not given up meanwhile
    await lock.release();
  });

  it('an expired session: an error naming it, then a new session connected', async () => {
    const from = log.lines.length;
    const old = sessionId();
    const ids = backend().client.session.credentials();
    await proxy.stop(); // keeps the client from taking its session back meanwhile
    await expireSession(zkConnect(), ids);
    await proxy.start();
    expect(await log.next('error', /lost .*opening a new session/, from)).toContain(`session ${old}`);
    const connected = await log.next('log', /^Connected to ZooKeeper/, from);
    expect(connected).not.toContain(old);
  });

  it('never writes a credential, and nothing above debug per lock call; a routine skip is at verbose', async () => {
    const from = log.lines.length;
    const locks = app.get(LockService);
    for (let i = 0; i < 5; i++) await locks.withLock('quiet', () => i);
    let granted!: () => void;
    let release!: () => void;
    const isHeld = new Promise<void>((resolve) => (granted = resolve));
    const holding = locks.withLock('quiet', () => new Promise<void>((done) => ((release = done), granted())));
    await isHeld;
    // Outside the holder's call: another caller, skipped while the lock is held.
    expect(await locks.withLock('quiet', () => 'ran', { ifLocked: 'skip' })).toBeUndefined();
    release();
    await holding;
    expect(log.lines.slice(from).filter(([level]) => level !== 'debug' && level !== 'verbose')).toEqual([]);
    // Below debug: an application keeping debug lines can leave routine skips out (docs/operations.md).
    expect(log.lines.slice(from).filter(([, message]) => message.includes('"quiet"'))).toEqual([
      ['verbose', `Skipped a call under lock "quiet" (write, ifLocked: 'skip'): another holder has it.`],
    ]);
    expect(log.lines.some(([, message]) => message.includes(credentials.password))).toBe(false);
  });
});

describe('a server that says it is an observer, in the Nest log', () => {
  it('a warning naming it, and the application does not start', async () => {
    const observer = new OldServerProxy(zkPort(), {
      reply:
        'Zookeeper version: 3.8.0-5a02a05eddb59aee6ac762f7ea82e92a68eb9c0f, built on 2022-02-25 08:49 UTC\nMode: observer\n',
    });
    await observer.start();
    const log = new CapturedLog();
    try {
      const moduleRef = await Test.createTestingModule({
        imports: [
          ZkLockModule.forRoot({ connectionString: observer.connectionString, rootPath: uniqueRoot('observer-log') }),
        ],
      }).compile();
      const app = moduleRef.createNestApplication({ logger: log });
      await expect(app.init()).rejects.toBeInstanceOf(ZkServerRefusedError);
      await app.close();
      expect(log.lines).toContainEqual([
        'warn',
        expect.stringMatching(
          new RegExp(`leaves a server: ZooKeeper server ${observer.connectionString} is an observer`),
        ),
      ]);
    } finally {
      await observer.stop();
    }
  });
});
