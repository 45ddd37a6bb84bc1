/**
 * Many concurrent calls on one client, in a process of its own so that the test sees the
 * warnings Node prints (Jest's sandbox hides them): 30 tries that withdraw at once, 30
 * waiters on one lock, 15 contending multi-locks. Prints the warnings' names as JSON.
 */
import { ZkLockBackend } from '../../lib/index';

async function main(): Promise<void> {
  const { connectionString, rootPath } = JSON.parse(process.argv[2]) as { connectionString: string; rootPath: string };
  const warnings: string[] = [];
  process.on('warning', (warning) => warnings.push(warning.name));
  const backend = await ZkLockBackend.connect({ connectionString, rootPath, emptyDirectoryGraceMs: 0 });
  try {
    const held = await backend.acquire('crowd');
    await Promise.all(Array.from({ length: 30 }, () => backend.tryAcquire('crowd')));
    const waiting = Array.from({ length: 30 }, () =>
      backend.acquire('crowd', { timeoutMs: 10_000 }).then((lock) => lock.release()),
    );
    const groups = Array.from({ length: 15 }, (_, i) =>
      backend.acquireAll([`g${i % 3}`, `g${(i + 1) % 3}`], { timeoutMs: 10_000 }).then((group) => group.release()),
    );
    await held.release();
    await Promise.all([...waiting, ...groups]);
    await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
  } finally {
    await backend.close();
  }
  process.stdout.write(JSON.stringify({ warnings }));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
