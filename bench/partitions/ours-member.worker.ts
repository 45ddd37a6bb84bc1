// A member of the partition pass (bench/partitions), on this library: one ZkLockBackend and
// one Partitioner, run as its documentation shows. Prints one JSON line per change of what
// it owns (`owned` of each change), with `hr`: process.hrtime.bigint(), CLOCK_MONOTONIC as
// the other processes of the machine read it. "stop" on stdin (or its end): `stop()`
// (revoke, release, leave), close the client, exit.
import { Partitioner, ZkLockBackend } from '../../lib/index.js';

const [connectionString, rootPath, group, memberId, parts, sessionTimeoutMs, settleMs] = process.argv.slice(2);

function emit(fields: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ hr: String(process.hrtime.bigint()), ...fields })}\n`);
}

async function main(): Promise<void> {
  const backend = await ZkLockBackend.connect({
    connectionString,
    rootPath,
    identity: memberId,
    sessionTimeoutMs: Number(sessionTimeoutMs),
  });
  const partitioner: Partitioner<number> = new Partitioner(backend, group, {
    partitions: Number(parts),
    memberId,
    settleMs: Number(settleMs),
  });
  partitioner.onChange(({ owned }) => emit({ owned }));
  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    await partitioner.stop();
    await backend.close();
    emit({ event: 'stopped' });
    process.exit(0);
  };
  process.stdin.on('data', (line) => void (String(line).includes('stop') && stop()));
  process.stdin.on('end', () => void stop());
  await partitioner.start();
  emit({ event: 'ready' });
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exit(1);
});
