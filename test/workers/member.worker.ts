// A separate process in a group and, if asked, a candidate for its leadership: proves that
// members and leaders are seen across processes, and what happens when one is killed.
// Reports each event as a JSON line (see event-line.ts); SIGTERM leaves and closes cleanly.
import { GroupMembership, LeaderElection, type JsonValue } from '../../lib/index.js';
import { connectFromArgs, workerArgs, type ConnectArgs } from './connect-from-args.js';
import { report } from './event-line';

interface Args extends ConnectArgs {
  readonly identity: string;
  /** Joins this group as `memberId`, if given. */
  readonly group?: string;
  readonly memberId?: string;
  readonly data?: Record<string, unknown>;
  /** Runs for leader of this group, and proclaims `proclaim` as each term begins. */
  readonly leaderGroup?: string;
  readonly proclaim?: JsonValue;
}

async function main(): Promise<void> {
  const args = workerArgs<Args>();
  const backend = await connectFromArgs(args, { identity: args.identity });
  report('session', { id: backend.client.session.id });
  let membership: GroupMembership | undefined;
  if (args.group) {
    membership = new GroupMembership(backend, args.group, { memberId: args.memberId, data: args.data });
    await membership.join();
    membership.signal!.addEventListener('abort', () => report('replaced', { code: membership!.signal!.reason.code }));
    report('joined', { members: membership.members().map((member) => member.id) });
  }
  let election: LeaderElection | undefined;
  if (args.leaderGroup) {
    election = new LeaderElection(backend, args.leaderGroup, { retryDelayMs: 100 });
    // Not leading yet: refused, nothing written.
    await election.proclaim('too early').catch((error: { code?: string }) => report('refused', { code: error.code }));
    election.onChange(({ leading }) => {
      if (!leading) return report('stepped-down');
      report('leading', { token: String(election!.fencingToken) });
      if (args.proclaim !== undefined)
        election!.proclaim(args.proclaim).then(
          () => report('proclaimed'),
          (error: { code?: string }) => report('proclaim-failed', { code: error.code }),
        );
    });
    election.start();
  }
  process.once('SIGTERM', () => {
    void Promise.all([membership?.leave(), election?.stop()])
      .then(() => backend.close())
      .then(() => process.exit(0));
  });
}

main().catch((error: unknown) => {
  process.stderr.write(String((error as Error).stack ?? error));
  process.exit(1);
});
