import 'reflect-metadata';
import { Injectable, type INestApplication, type OnApplicationBootstrap } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';

import { LockService, ZkLockBackend } from '../../lib/index';
import { waitUntil } from '../support/wait-until';
import { uniqueRoot, zkConnect } from '../support/zk-test-env';
import { backendOf, startApp } from './nest-fixture';

/** The one step all instances share in this process, as a database would: it runs until `finish()`. */
const step = {
  runs: 0,
  ended: false,
  finish: (): void => undefined,
  async run(): Promise<void> {
    step.runs++;
    await new Promise<void>((resolve) => (step.finish = resolve));
    step.ended = true;
  },
};

@Injectable()
class Migrations implements OnApplicationBootstrap {
  ran: boolean | undefined;
  endedWhenBootstrapped: boolean | undefined;

  constructor(private readonly locks: LockService) {}

  // Start-up steps in onApplicationBootstrap: init() (and so app.listen()) waits for them.
  async onApplicationBootstrap(): Promise<void> {
    this.ran = await this.locks.runOnce('migrate', () => step.run());
    this.endedWhenBootstrapped = step.ended;
  }
}

describe('LockService.runOnce: a start-up step in onApplicationBootstrap', () => {
  it("three instances: one runs it, every init() waits for its end (past acquireTimeoutMs), the others don't run it", async () => {
    const rootPath = uniqueRoot('nest-run-once');
    const apps: INestApplication[] = [];
    const observer = await ZkLockBackend.connect({ connectionString: zkConnect(), rootPath });
    const starting = [0, 1, 2].map(() =>
      startApp({ providers: [Migrations] }, { acquireTimeoutMs: 100 }, rootPath).then((app) => (apps.push(app), app)),
    );
    try {
      await waitUntil(() => step.runs === 1, 'one instance runs the step', 30_000);
      await waitUntil(async () => (await observer.contenders('migrate')).length === 3, 'the other two wait', 30_000);
      await sleep(300); // waiters wait longer than acquireTimeoutMs: runOnce waits without limit
      step.finish();
      const started = await Promise.all(starting);
      const migrations = started.map((app) => app.get(Migrations));
      expect(migrations.map((m) => m.ran).filter(Boolean)).toEqual([true]);
      expect(migrations.map((m) => m.endedWhenBootstrapped)).toEqual([true, true, true]);
      expect(step.runs).toBe(1);
      expect(await backendOf(started[0]).readRecord('run-once/migrate')).not.toBeNull();
    } finally {
      step.finish();
      await Promise.allSettled(starting);
      await Promise.all([...apps.map((app) => app.close()), observer.close()]);
    }
  });
});
