import 'reflect-metadata';
import { once } from 'node:events';

import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';

import {
  LeadershipService,
  LockLostError,
  LockService,
  WhenLeader,
  WithLock,
  ZK_LOCK_BACKEND,
  ZkLockModule,
  type ZkLockBackend,
} from '../../lib/index';
import { LockFixture } from '../support/lock-fixture';
import { TcpProxy } from '../support/tcp-proxy';
import { waitUntil } from '../support/wait-until';
import { zkPort } from '../support/zk-test-env';

/** A promise the test opens by hand. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/** Methods whose bodies ignore their signal: each records it and waits for the test. */
@Injectable()
class Stubborn {
  readonly inside = gate();
  signal: AbortSignal | undefined;
  entered = gate();

  constructor(
    private readonly locks: LockService,
    private readonly leadership: LeadershipService,
  ) {}

  @WithLock('nest-body')
  async locked(): Promise<string> {
    this.signal = this.locks.held('nest-body')!.signal;
    this.entered.open();
    await this.inside.opened;
    return 'done';
  }

  @WhenLeader('nest-body')
  async lead(): Promise<string | undefined> {
    this.signal = this.leadership.term('nest-body')!.signal;
    this.entered.open();
    await this.inside.opened;
    return 'done';
  }
}

/**
 * A Nest app whose lock's session goes at risk (its link black-holed) and recovers: the
 * method keeps its lock (its node stays) until it returns, though its signal aborted.
 */
describe('@WithLock and @WhenLeader: a body that ignores its lost signal keeps its node while the session lives', () => {
  let fx: LockFixture;
  let proxy: TcpProxy;
  let app: INestApplication;
  let other: ZkLockBackend;
  beforeAll(async () => {
    fx = await LockFixture.create('nest-lost-body');
    other = await fx.backend();
  });
  beforeEach(async () => {
    proxy = new TcpProxy(zkPort());
    await proxy.start();
    const moduleRef = await Test.createTestingModule({
      imports: [
        ZkLockModule.forRoot({
          connectionString: proxy.connectionString,
          rootPath: fx.rootPath,
          sessionTimeoutMs: 4000,
          emptyDirectoryGraceMs: 0,
        }),
      ],
      providers: [Stubborn],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });
  afterEach(async () => {
    await app?.close();
    await proxy?.stop();
  });
  afterAll(() => fx.cleanup());

  const backendOf = (): ZkLockBackend => app.get<ZkLockBackend>(ZK_LOCK_BACKEND);

  /** Black-holes the app's link until `signal` aborts, heals it, and waits for the same session to recover. */
  async function atRiskThenRecovered(signal: AbortSignal): Promise<void> {
    const { client } = backendOf();
    const sessionId = client.session.id;
    // Proven again; or, when the proof came too late on a loaded machine, presumed lost and
    // given back (the same server session): the rule is the same.
    const back = new AbortController();
    const recovered = Promise.race([
      once(client, 'recovered', { signal: back.signal }),
      once(client, 'session-lost', { signal: back.signal }).then(() => client.session.whenConnected()),
    ]);
    proxy.blackhole();
    await once(signal, 'abort');
    proxy.heal();
    await recovered;
    back.abort();
    expect(signal.reason).toBeInstanceOf(LockLostError);
    expect(client.session.id).toBe(sessionId);
  }

  it('@WithLock: another client is granted only once the method returned', async () => {
    const stubborn = app.get(Stubborn);
    const call = stubborn.locked();
    call.catch(() => undefined);
    await stubborn.entered.opened;
    const waiting = other.acquire('nest-body', { timeoutMs: 60_000 });
    let granted = false;
    void waiting.then(() => (granted = true));
    await fx.queued('nest-body', 2);

    await atRiskThenRecovered(stubborn.signal!);
    // Through the app's own session, behind anything it sent: its node is still first.
    const contenders = await backendOf().contenders('nest-body');
    expect(contenders.map((c) => c.holding)).toEqual([true, false]);
    expect((await fx.inspector.children(backendOf().pathOf('nest-body')))?.length).toBe(2);
    expect(granted).toBe(false);

    stubborn.inside.open();
    await expect(call).rejects.toBeInstanceOf(LockLostError);
    const lock = await waiting;
    await lock.release();
  });

  it('@WhenLeader: another candidate leads only once the method returned', async () => {
    const leadership = app.get(LeadershipService);
    await waitUntil(() => leadership.isLeader('nest-body'), 'the app leads');
    const stubborn = app.get(Stubborn);
    const call = stubborn.lead();
    call?.catch(() => undefined);
    await stubborn.entered.opened;
    const waiting = other.acquire('leader:nest-body', { timeoutMs: 60_000 });
    let granted = false;
    void waiting.then(() => (granted = true));
    await fx.queued('leader:nest-body', 2);

    await atRiskThenRecovered(stubborn.signal!);
    const contenders = await backendOf().contenders('leader:nest-body');
    expect(contenders[0].holding).toBe(true);
    expect(contenders.length).toBeGreaterThanOrEqual(2);
    expect(granted).toBe(false);

    stubborn.inside.open();
    await expect(call).rejects.toBeInstanceOf(LockLostError);
    const lock = await waiting;
    await lock.release();
  });
});
