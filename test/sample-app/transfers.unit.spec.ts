import 'reflect-metadata';

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { TestingModule } from '@nestjs/testing';

import { InMemoryLockStore, LockService, type LockContender } from '../../lib/index';
import { NotEnoughSeatsError } from '../../sample-app/src/shows/show.errors';
import { showLock } from '../../sample-app/src/shows/show.model';
import { ShowStore } from '../../sample-app/src/shows/show.store';
import { ShowsService } from '../../sample-app/src/shows/shows.service';
import { TransfersService } from '../../sample-app/src/shows/transfers.service';
import { rejectionOf, testingInstance } from './sample-app.testing';

/**
 * Seat transfers between two shows (`@WithLock` with a key function returning both shows'
 * lock names: a multi-lock), over `ZkLockModule.forTesting()`: two instances share one
 * `InMemoryLockStore` and one store folder.
 */

const newShows = (): [string, string] => {
  const base = `show-${randomBytes(4).toString('hex')}`;
  return [`${base}-matinee`, `${base}-evening`];
};

/** Holds every caller of `pass` until `count` of them arrived, then lets them all through. */
function gate(count: number): { pass<T>(value: T): Promise<T> } {
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return {
    async pass(value) {
      if (++arrived === count) open();
      await opened;
      return value;
    },
  };
}

describe('sample app seat transfers, unit-tested over ZkLockModule.forTesting()', () => {
  let storeDir: string;
  let one: TestingModule;
  let two: TestingModule;

  const open = (shows: string[], seats: number) =>
    Promise.all(shows.map((show) => one.get(ShowsService).open(show, seats)));
  const seatsOf = (show: string) => two.get(ShowsService).availability(show);

  beforeAll(async () => {
    storeDir = mkdtempSync(join(tmpdir(), 'zk-lock-sample-transfers-'));
    const locks = new InMemoryLockStore();
    [one, two] = await Promise.all([testingInstance('one', locks, storeDir), testingInstance('two', locks, storeDir)]);
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(async () => {
    await Promise.all([one?.close(), two?.close()]);
    rmSync(storeDir, { recursive: true, force: true });
  });

  it("writes both shows holding both shows' locks, and reports each lock's fencing token", async () => {
    const [matinee, evening] = newShows();
    await open([matinee, evening], 10);
    const locks = one.get(LockService);
    const store = one.get(ShowStore);
    const write = store.write.bind(store);
    const inside: Array<{ show: string; holders: LockContender[][]; tokens: Array<bigint | undefined> }> = [];
    jest.spyOn(store, 'write').mockImplementation(async (row) => {
      const names = [showLock(matinee), showLock(evening)];
      inside.push({
        show: row.id,
        holders: await Promise.all(names.map((name) => locks.contenders(name))),
        tokens: names.map((name) => locks.held(name)?.fencingToken),
      });
      return write(row);
    });

    const moved = await one.get(TransfersService).transfer(matinee, evening, 3, performance.now());

    const holder = [expect.objectContaining({ mode: 'write', holding: true, identity: 'one' })];
    expect(inside.map((i) => i.show).sort()).toEqual([evening, matinee].sort());
    inside.forEach((i) => expect(i.holders).toEqual([holder, holder]));
    const [fromToken, toToken] = inside[0].tokens;
    expect(moved).toMatchObject({
      seats: 3,
      instance: 'one',
      from: { id: matinee, seats: 7, remaining: 7 },
      to: { id: evening, seats: 13, remaining: 13 },
      fencingTokens: { from: String(fromToken), to: String(toToken) },
    });
    expect(moved.timing.holdMs).toBeGreaterThan(0);
    expect(await seatsOf(matinee)).toEqual({ id: matinee, seats: 7, remaining: 7, reserved: 0 });
    expect(await seatsOf(evening)).toEqual({ id: evening, seats: 13, remaining: 13, reserved: 0 });
    expect(await two.get(LockService).contenders(showLock(matinee))).toEqual([]); // released
    expect(await two.get(LockService).contenders(showLock(evening))).toEqual([]);
  });

  it('transfers in opposite directions from two instances at once: no deadlock, no seat lost or created', async () => {
    const [matinee, evening] = newShows();
    await open([matinee, evening], 10);
    // 24 transfers of one seat: instance one moves matinee -> evening, instance two the other way.
    const transfers = Array.from({ length: 24 }, (_, i) =>
      i % 2 === 0
        ? one.get(TransfersService).transfer(matinee, evening, 1, performance.now())
        : two.get(TransfersService).transfer(evening, matinee, 1, performance.now()),
    );

    const moved = await Promise.all(transfers);

    expect(moved.map((m) => m.instance).filter((i) => i === 'one')).toHaveLength(12);
    expect(await seatsOf(matinee)).toEqual({ id: matinee, seats: 10, remaining: 10, reserved: 0 });
    expect(await seatsOf(evening)).toEqual({ id: evening, seats: 10, remaining: 10, reserved: 0 });
    // They overlapped: most of them waited for the locks; and nothing is left held.
    expect(moved.filter((m) => m.timing.waitMs >= 5).length).toBeGreaterThan(12);
    expect(await one.get(LockService).contenders(showLock(matinee))).toEqual([]);
    expect(await one.get(LockService).contenders(showLock(evening))).toEqual([]);
  });

  it('without the locks (the control), overlapping transfers create or destroy seats', async () => {
    const [matinee, evening] = newShows();
    await open([matinee, evening], 10);
    // Every transfer reads both shows before any writes: the overlap that the locks prevent.
    const reads = gate(16);
    for (const app of [one, two]) {
      const store = app.get(ShowStore);
      const read = store.read.bind(store);
      jest.spyOn(store, 'read').mockImplementation(async (id) => reads.pass(await read(id)));
    }

    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        i % 2 === 0
          ? one.get(TransfersService).transferUnlocked(matinee, evening, 1)
          : two.get(TransfersService).transferUnlocked(evening, matinee, 1),
      ),
    );

    jest.restoreAllMocks();
    // Each show ends as the last writer left it, 9 or 11 seats: one transfer's write, not eight.
    const after = [(await seatsOf(matinee)).seats, (await seatsOf(evening)).seats];
    after.forEach((seats) => expect([9, 11]).toContain(seats));
  });

  it('refuses to move more seats than are free, and changes neither show', async () => {
    const [matinee, evening] = newShows();
    await open([matinee, evening], 2);

    const error = await rejectionOf(two.get(TransfersService).transfer(matinee, evening, 3, performance.now()));

    expect(error).toBeInstanceOf(NotEnoughSeatsError);
    expect(error).toMatchObject({ showId: matinee, requested: 3, remaining: 2 });
    expect(await seatsOf(matinee)).toMatchObject({ seats: 2, remaining: 2 });
    expect(await seatsOf(evening)).toMatchObject({ seats: 2, remaining: 2 });
    expect(await two.get(LockService).contenders(showLock(matinee))).toEqual([]);
  });
});
