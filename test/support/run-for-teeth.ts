import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Lets a churn test's loops run for at least `minMs`, then on until `enough()` says the run
 * had its teeth (the grants, checks and faults its assertions count), for at most
 * `3 × minMs` in all. A loaded machine does less per second, not less safely: a fixed
 * duration would fail such a test for the load, not for a bug. Past the cap the test's own
 * count assertions fail, with the counts.
 */
export async function runForTeeth(minMs: number, enough: () => boolean): Promise<void> {
  const until = performance.now() + 3 * minMs;
  await sleep(minMs);
  while (!enough() && performance.now() < until) await sleep(250);
}
