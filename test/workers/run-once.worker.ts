// One instance at start-up, for the runOnce process tests: it calls runOnce(key) with a
// step that reports `running`, then runs until the test sends SIGUSR2 (or kills it
// mid-run), then reports `ran`. Each event is one JSON line on stdout with Date.now()
// (a clock shared by the processes): `connected`, `running`, `ran`, and `resolved` with
// runOnce's result, or `failed` with the name of the error it rejected with.
import { once } from 'node:events';

import { runOnce } from '../../lib/index.js';
import { connectFromArgs, workerArgs, type ConnectArgs } from './connect-from-args.js';
import { report } from './event-line.js';

interface Args extends ConnectArgs {
  key: string;
  by: string;
}

async function main(): Promise<void> {
  const args = workerArgs<Args>();
  const locks = await connectFromArgs(args);
  report('connected');
  try {
    const ran = await runOnce(
      locks,
      args.key,
      async () => {
        // Listen first: the test signals as soon as it reads `running`, and a SIGUSR2 with no
        // listener ends the process.
        const ended = once(process, 'SIGUSR2');
        report('running');
        await ended;
        report('ran');
      },
      { by: args.by },
    );
    report('resolved', { ran });
  } catch (error) {
    report('failed', { error: (error as Error).name });
  }
  await locks.close();
}

main().catch((error: unknown) => {
  process.stderr.write(String((error as Error).stack ?? error));
  process.exit(1);
});
