import 'reflect-metadata';

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Logger } from '@nestjs/common';
import type { TestingModule } from '@nestjs/testing';

import {
  httpStatusOf,
  InMemoryLockBackend,
  InMemoryLockStore,
  LockLostError,
  LockService,
  ZK_LOCK_BACKEND,
  type LockContender,
} from '../../lib/index';
import { ReservationsController } from '../../sample-app/src/shows/reservations.controller';
import { ReservationsService } from '../../sample-app/src/shows/reservations.service';
import { showLock } from '../../sample-app/src/shows/show.model';
import { SoldOutError } from '../../sample-app/src/shows/show.errors';
import { ShowStore } from '../../sample-app/src/shows/show.store';
import { ShowsService } from '../../sample-app/src/shows/shows.service';
import { rejectionOf, testingInstance as instance } from './sample-app.testing';

/**
 * The sample app's reservations, unit-tested the way a user of the library would: the
 * app's `ZkLockModule.forRootAsync(…)` gives way to `ZkLockModule.forTesting()`, so the
 * same `@WithLock` and `LockService` run over locks in memory, with no ZooKeeper. Two
 * testing modules sharing one `InMemoryLockStore` (and one store folder, the app's
 * "database") are two instances of the service.
 */

/** Sockets and servers this process has open. */
const openSockets = (): number =>
  (process as unknown as { _getActiveHandles(): unknown[] })
    ._getActiveHandles()
    .filter((h) => h instanceof Socket || h instanceof Server).length;

const newShow = (): string => `show-${randomBytes(4).toString('hex')}`;

describe('sample app reservations, unit-tested over ZkLockModule.forTesting()', () => {
  let storeDir: string;
  let socketsBefore: number;
  let one: TestingModule;
  let two: TestingModule;

  beforeAll(async () => {
    socketsBefore = openSockets();
    storeDir = mkdtempSync(join(tmpdir(), 'zk-lock-sample-unit-'));
    const locks = new InMemoryLockStore();
    [one, two] = await Promise.all([instance('one', locks, storeDir), instance('two', locks, storeDir)]);
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(async () => {
    await Promise.all([one?.close(), two?.close()]);
    rmSync(storeDir, { recursive: true, force: true });
  });

  it('starts both instances over locks in memory, with no socket opened', () => {
    expect(one.get(ZK_LOCK_BACKEND)).toBeInstanceOf(InMemoryLockBackend);
    expect(openSockets()).toBe(socketsBefore);
  });

  it("a reservation reads and writes the show holding its lock, and records that grant's fencing token", async () => {
    const show = newShow();
    await one.get(ShowsService).open(show, 2);
    const locks = one.get(LockService);
    const store = one.get(ShowStore);
    const write = store.write.bind(store);
    const inside: Array<{ contenders: LockContender[]; token: bigint | undefined }> = [];
    jest.spyOn(store, 'write').mockImplementation(async (row) => {
      inside.push({
        contenders: await locks.contenders(showLock(show)),
        token: locks.held(showLock(show))?.fencingToken,
      });
      return write(row);
    });

    const sold = await one.get(ReservationsService).reserve(show, 'ada', performance.now());

    expect(inside).toEqual([
      {
        contenders: [expect.objectContaining({ mode: 'write', holding: true, identity: 'one' })],
        token: expect.any(BigInt),
      },
    ]);
    expect(sold).toMatchObject({
      showId: show,
      customer: 'ada',
      instance: 'one',
      remaining: 1,
      fencingToken: String(inside[0].token),
    });
    expect(await two.get(LockService).contenders(showLock(show))).toEqual([]); // released
  });

  it('two instances racing for the last seat: exactly one sells it, the other answers sold out', async () => {
    const show = newShow();
    await one.get(ShowsService).open(show, 1);

    const outcomes = await Promise.allSettled([
      one.get(ReservationsController).reserve(show, { customer: 'ada' }),
      two.get(ReservationsController).reserve(show, { customer: 'bob' }),
    ]);

    const sold = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason] : []));
    expect(sold).toHaveLength(1);
    expect(refused).toEqual([expect.any(SoldOutError)]);
    expect(await two.get(ShowsService).availability(show)).toEqual({ id: show, seats: 1, remaining: 0, reserved: 1 });
    expect((await one.get(ShowsService).reservations(show)).map((r) => r.customer)).toEqual([sold[0].customer]);
  });

  it('a lock lost in the middle of a reservation fails it with LockLostError (503 over HTTP); the other instance sells at once', async () => {
    const show = newShow();
    await one.get(ShowsService).open(show, 2);
    const store = one.get(ShowStore);
    const read = store.read.bind(store);
    // The instance's lock is taken away while it sells, as if its session expired.
    jest.spyOn(store, 'read').mockImplementation(async (id) => {
      const row = await read(id);
      one.get<InMemoryLockBackend>(ZK_LOCK_BACKEND).loseLock(showLock(show));
      return row;
    });
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);

    const error = await rejectionOf(one.get(ReservationsService).reserve(show, 'ada', performance.now()));

    expect(error).toBeInstanceOf(LockLostError);
    expect(error).toMatchObject({ code: 'LOCK_LOST', lockName: showLock(show) });
    expect(httpStatusOf(error)).toBe(503); // what LockErrorInterceptor answers
    expect(warn).toHaveBeenCalledWith(expect.stringContaining(`Lock "${showLock(show)}" was lost`));
    await expect(two.get(ReservationsService).reserve(show, 'bob', performance.now())).resolves.toMatchObject({
      instance: 'two',
    });
    expect(await two.get(LockService).contenders(showLock(show))).toEqual([]);
  });
});
