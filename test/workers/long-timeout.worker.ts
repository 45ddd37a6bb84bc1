// longTimeout in a process of its own, where Node's process warnings can be heard (jest
// gives each test file a copy of `process` that Node's own warnings never reach). Arms
// timers far past setTimeout's range, waits, and reports what fired and what Node said.
import { setTimeout as sleep } from 'node:timers/promises';

import { longTimeout } from '../../lib/core/util/long-timeout.js';

interface Args {
  /** The delays to arm, in ms. */
  delays: number[];
  /** How long to watch before clearing them. */
  watchMs: number;
}

async function main(): Promise<void> {
  const { delays, watchMs } = JSON.parse(process.argv[2]) as Args;
  const warnings: string[] = [];
  process.on('warning', (warning) => warnings.push(`${warning.name}: ${warning.message}`));
  const fired: number[] = [];
  const timers = delays.map((ms, i) => longTimeout(() => fired.push(ms), ms, { unref: i % 2 === 1 }));
  await sleep(watchMs);
  for (const timer of timers) timer.clear();
  await sleep(10); // a warning is emitted on a later tick
  process.stdout.write(JSON.stringify({ fired, warnings }));
}

void main();
