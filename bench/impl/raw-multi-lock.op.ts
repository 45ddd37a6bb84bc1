import * as zookeeper from 'node-zookeeper-client';

import { blockerOf, nodePrefix, type RawZk } from '../raw-client.loop.js';
import { runInTurns } from '../support/variant.turns.js';
import type { MultiLockParams, MultiLockResult } from '../workers/recipe-ops.protocol.js';
import { range } from './bench-impl.js';

/**
 * Scenario 7's floor: the requests `acquireAll` sends for free names, with plain
 * callbacks: every name's create and children read at once, then (all free) every delete
 * at once. `all` with `locks` names, `one` with a single name; directories made first.
 */
export async function rawMultiLock(zk: RawZk, base: string, { prefix, locks, cycles, warmup }: MultiLockParams): Promise<MultiLockResult> {
  const all = range(locks).map((i) => `${base}/${prefix}-all-${i}`);
  const one = [`${base}/${prefix}-one`];
  await Promise.all([...all, ...one].map((dir) => zk.mkdirp(dir)));
  const prefixes = new Map([...all, ...one].map((dir) => [dir, nodePrefix()]));
  const cycle = (dirs: string[]) => () => groupCycle(zk, dirs, prefixes);
  return { variants: await runInTurns({ all: cycle(all), one: cycle(one) }, cycles, warmup, () => ({ ...zk.counts })) };
}

/** Creates and reads every directory's queue at once; once all replied and all are free, deletes every node at once. */
function groupCycle(zk: RawZk, dirs: readonly string[], prefixes: ReadonlyMap<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const created: string[] = [];
    const listed: string[][] = [];
    let pending = dirs.length * 2;
    let failed = false;
    const settle = (error: Error | null): void => {
      if (failed) return;
      if (error) {
        failed = true;
        return reject(error);
      }
      if (--pending > 0) return;
      const held = dirs.every((dir, i) => blockerOf(listed[i], created[i].slice(dir.length + 1)) === null);
      if (!held) return reject(new Error(`raw group: ${dirs.join(', ')} not all free`));
      let removing = created.length;
      for (const path of created) zk.remove(path, (e) => (e ? reject(e) : --removing === 0 && resolve()));
    };
    dirs.forEach((dir, i) => {
      zk.create(`${dir}/${prefixes.get(dir)}`, zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL, (error, path) => {
        created[i] = path!;
        settle(error);
      });
      zk.getChildren(dir, (error, children) => {
        listed[i] = children!;
        settle(error);
      });
    });
  });
}
