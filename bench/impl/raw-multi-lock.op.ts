import * as zookeeper from 'node-zookeeper-client';

import { blockerOf, nodePrefix, type RawZk } from '../raw-client.js';
import { runInTurns } from '../support/variant-turns.js';
import type { MultiLockParams, MultiLockResult } from '../workers/recipe-ops.protocol.js';
import { range } from './bench-impl.js';

/**
 * Scenario 7's floor: the requests `acquireAll` sends for free names, with plain
 * callbacks: one multi of creates with every children read behind it, then (all free)
 * one multi of deletes. The reads go one per name: node-zookeeper-client has no
 * `multiRead`, which ours sends instead on ZooKeeper 3.6 and later. `all` with `locks` names, `one` with a single name; directories made first.
 */
export async function rawMultiLock(
  zk: RawZk,
  base: string,
  { prefix, locks, cycles, warmup }: MultiLockParams,
): Promise<MultiLockResult> {
  const all = range(locks).map((i) => `${base}/${prefix}-all-${i}`);
  const one = [`${base}/${prefix}-one`];
  await Promise.all([...all, ...one].map((dir) => zk.mkdirp(dir)));
  const prefixes = new Map([...all, ...one].map((dir) => [dir, nodePrefix()]));
  const cycle = (dirs: string[]) => () => groupCycle(zk, dirs, prefixes);
  return { variants: await runInTurns({ all: cycle(all), one: cycle(one) }, cycles, warmup, () => ({ ...zk.counts })) };
}

/**
 * acquireAll's wire shape for free names, with plain callbacks: one multi creating every
 * name's node, every children read right behind it; once all replied and all are free, one
 * multi deleting every node. A single name: a plain create, read and delete.
 */
function groupCycle(zk: RawZk, dirs: readonly string[], prefixes: ReadonlyMap<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    let created: string[] = [];
    const listed: string[][] = [];
    let pending = dirs.length + 1;
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
      if (created.length === 1) zk.remove(created[0], (e) => (e ? reject(e) : resolve()));
      else zk.multiRemove(created, (e) => (e ? reject(e) : resolve()));
    };
    const paths = dirs.map((dir) => `${dir}/${prefixes.get(dir)}`);
    if (paths.length === 1) {
      zk.create(paths[0], zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL, (error, path) => {
        created = [path!];
        settle(error);
      });
    } else {
      zk.multiCreate(paths, (error, made) => {
        created = made ?? [];
        settle(error);
      });
    }
    dirs.forEach((dir, i) => {
      zk.getChildren(dir, (error, children) => {
        listed[i] = children!;
        settle(error);
      });
    });
  });
}
