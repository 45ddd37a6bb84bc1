// acquireAll in a process of its own, where Node's process warnings can be heard (jest
// gives each test file a copy of `process` that Node's own warnings never reach): takes
// and releases `count` locks in one call, with and without a signal of the caller's, and
// reports what Node said.
import { setTimeout as sleep } from 'node:timers/promises';

import { ZkLockBackend } from '../../lib/index.js';

interface Args {
  connectionString: string;
  rootPath: string;
  count: number;
}

async function main(): Promise<void> {
  const { connectionString, rootPath, count } = JSON.parse(process.argv[2]) as Args;
  const warnings: string[] = [];
  process.on('warning', (warning) => warnings.push(`${warning.name}: ${warning.message}`));
  const backend = await ZkLockBackend.connect({ connectionString, rootPath });
  try {
    const names = Array.from({ length: count }, (_, i) => `warn-${i}`);
    for (const signal of [undefined, new AbortController().signal]) {
      const group = await backend.acquireAll(names, { timeoutMs: 10_000, signal });
      await group.release();
    }
  } finally {
    await backend.close();
  }
  await sleep(10); // a warning is emitted on a later tick
  process.stdout.write(JSON.stringify({ warnings }));
}

void main();
