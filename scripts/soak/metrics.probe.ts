import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { getHeapCodeStatistics, queryObjects } from 'node:v8';

import type { ClientPool } from './client.pool.js';
import { serverWatches } from './watches.probe.js';

/**
 * Every figure of a checkpoint, taken while no cycle runs (the workers are parked) and
 * every client is connected: what is left then is what the cycles left behind.
 */
export type Sample = Record<(typeof METRICS)[number], number>;

export const METRICS = [
  'heapUsed', // bytes, after full GCs
  // heapUsed without compiled code and bytecode (v8.getHeapCodeStatistics): the JIT keeps
  // compiling and deoptimising for tens of thousands of cycles, about as many bytes per
  // cycle as one leaked small object; objects, strings and Map entries stay in.
  'heapObjects',
  'liveObjects', // JS objects alive after a full GC (v8.queryObjects(Object)), the soak's own records left out
  'external', // bytes outside the JS heap (Buffers), after the same GCs
  'serverWatches', // watches the server holds for our sessions (wchc)
  'timers', // 'Timeout' entries of process.getActiveResourcesInfo(): ref'ed timers
  'handles', // every entry of process.getActiveResourcesInfo()
  'watchers', // the sessions' own watch listeners (session.watcherCount())
  'rawWatchPaths', // paths in node-zookeeper-client's watcher table
  'heldOrWaiting', // the backends' held handles and waits in flight
  'pendingRequests', // requests node-zookeeper-client still waits an answer for
  'listeners', // listeners on the library's and the client's event emitters
] as const;

/** `ownObjects`: objects the soak itself keeps for its records (2 per checkpoint taken so far). */
export async function takeSample(pool: ClientPool, zkPort: number, ownObjects: number): Promise<Sample> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('the soak measures heap after a forced GC: run node with --expose-gc (npm run soak does)');
  await pool.whenAllConnected();
  // The liveness heartbeat (a write every T/15) may be in flight; wait for its answer.
  for (let waited = 0; pool.libraryCounts().pendingRequests > 0 && waited < 2_000; waited += 5) await sleep(5);
  // A few turns for releases' last callbacks (directory sweeps, reconnect hand-shakes) to land.
  for (let i = 0; i < 5; i++) await nextTurn();
  // Resources first: the four-letter sockets below would count as handles.
  const resources = process.getActiveResourcesInfo();
  const library = pool.libraryCounts();
  // Several full GCs with turns between: weak callbacks and finalizers run, then their garbage goes.
  for (let i = 0; i < 4; i++) {
    gc();
    await nextTurn();
  }
  // And one more with no turn before the reading: what a turn allocates after a GC sits in
  // V8's young generation until the next one, and was read as up to ~200 KB of heap that
  // comes and goes from one checkpoint to the next (enough to look like growth).
  gc();
  const { heapUsed, external } = process.memoryUsage();
  const code = getHeapCodeStatistics();
  const liveObjects = queryObjects(Object, { format: 'count' }) - ownObjects; // queryObjects collects garbage first
  const watches = await serverWatches(zkPort, pool.sessionIds());
  return {
    heapUsed,
    heapObjects: heapUsed - code.code_and_metadata_size - code.bytecode_and_metadata_size,
    liveObjects,
    external,
    serverWatches: watches.ours,
    timers: resources.filter((r) => r === 'Timeout').length,
    handles: resources.length,
    ...library,
  };
}
