// A scheduled job's instance, for the kept-hold process tests: it runs one tick, a
// `withLock` with `ifLocked: 'skip'` and `holdAtLeastMs`, whose body returns at once, and
// then stays up until the test closes it (SIGTERM: `close()` of the backend) or kills it
// (SIGKILL). Each event is one JSON line on stdout with Date.now() (a clock shared by the
// processes): `ran` (the body started), `resolved` (withLock resolved), `closed`.
import { ReentrantLocker } from '../../lib/index.js';
import { connectFromArgs, workerArgs, type ConnectArgs } from './connect-from-args.js';
import { report } from './event-line.js';

interface Args extends ConnectArgs {
  name: string;
  holdAtLeastMs: number;
}

async function main(): Promise<void> {
  const args = workerArgs<Args>();
  const locks = await connectFromArgs(args);
  process.once('SIGTERM', () => {
    void locks.close().then(() => {
      report('closed');
      process.exit(0);
    });
  });
  const locker = new ReentrantLocker(locks, 10_000);
  const result = await locker.withLock(args.name, () => (report('ran'), 'tick'), {
    ifLocked: 'skip',
    holdAtLeastMs: args.holdAtLeastMs,
  });
  report('resolved', { result });
  // Stays up (the ZooKeeper session keeps the process alive) until the test ends it.
}

main().catch((error: unknown) => {
  process.stderr.write(String((error as Error).stack ?? error));
  process.exit(1);
});
