// A partition member in its own process, for the crash tests: it joins a group with a
// Partitioner and reports, one JSON line per event, every change it is told (with
// `hr`: process.hrtime.bigint(), a clock the processes of the machine share) and each
// revoked part's drain. SIGTERM stops it gracefully (revoke, drain, release, leave),
// then it closes its client and exits; SIGKILL is the crash.
import { setTimeout as sleep } from 'node:timers/promises';

import { Partitioner } from '../../lib/index.js';
import { connectFromArgs, workerArgs, type ConnectArgs } from './connect-from-args.js';

interface Args extends ConnectArgs {
  readonly group: string;
  readonly memberId: string;
  readonly partitions: number;
  readonly settleMs: number;
  readonly drainMs: number;
}

function report(event: string, fields: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ hr: String(process.hrtime.bigint()), event, ...fields })}\n`);
}

async function main(): Promise<void> {
  const args = workerArgs<Args>();
  const backend = await connectFromArgs(args, { identity: `worker-${args.memberId}` });
  const partitioner: Partitioner<number> = new Partitioner(backend, args.group, {
    partitions: args.partitions,
    memberId: args.memberId,
    settleMs: args.settleMs,
    onRevoked: async (parts) => {
      await sleep(args.drainMs);
      report('drained', { parts });
    },
  });
  partitioner.onChange((change) => {
    const tokens = Object.fromEntries(
      change.assigned.map((part) => [part, String(partitioner.handle(part)!.fencingToken)]),
    );
    report('change', { assigned: change.assigned, revoked: change.revoked, lost: change.lost, tokens });
  });
  process.once('SIGTERM', () => {
    void (async () => {
      await partitioner.stop();
      await backend.close();
      report('stopped', {});
      process.exit(0);
    })();
  });
  await partitioner.start();
  report('started', {});
}

void main();
