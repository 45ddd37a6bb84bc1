import type { LockContender } from '../core/port/lock-backend.js';
import { revocationOptInOf, type RevocationOptIn } from '../core/port/node-format.js';
import { askHolders } from '../core/zookeeper/revocation.js';
import type { ZkLockBackend } from '../core/zookeeper/zk-lock-backend.js';
import { CLI_EXIT } from './errors.js';
import { json } from './output.js';

interface Holder {
  readonly node: string;
  readonly identity: string | null;
  /** What its node's name says: `unknown` for another client's node (Kazoo, Curator, an older version). */
  readonly revocable: RevocationOptIn;
}

const holderOf = ({ node, identity }: LockContender): Holder => ({
  node,
  identity,
  revocable: revocationOptInOf(node),
});

const names = (holders: readonly Holder[]): string =>
  holders.map(({ identity, node }) => `${identity ?? '?'} (${node})`).join(', ');

/**
 * `revoke <name>`: asks the holders that opted in to revocation, and those of other clients
 * (a Curator holder hears it if it called makeRevocable), as Curator's Revoker does. A
 * holder of ours that did not opt in is not asked: it would not hear it, and the request
 * would overwrite the identity its node shows. Exit 6 when any holder did not opt in.
 */
export async function revoke(
  backend: ZkLockBackend,
  name: string,
  asJson: boolean,
): Promise<{ readonly out: string; readonly code: number }> {
  const holders = (await backend.contenders(name)).filter((contender) => contender.holding).map(holderOf);
  const notOptedIn = holders.filter((holder) => holder.revocable === 'not-revocable');
  const asking = holders.filter((holder) => holder.revocable !== 'not-revocable');
  const reached = new Set(
    await askHolders(
      backend.client.liveSession(),
      backend.pathOf(name),
      asking.map((holder) => holder.node),
    ),
  );
  const asked = asking.filter((holder) => reached.has(holder.node));
  const code = notOptedIn.length > 0 ? CLI_EXIT.notOptedIn : asked.length === 0 ? CLI_EXIT.failed : CLI_EXIT.done;
  if (asJson) return { out: json({ name, asked, notOptedIn }), code };
  const lines = [
    ...(asked.length > 0
      ? [`Asked ${names(asked)} to release "${name}"; a holder hears it if it acquired with revocable: true.`]
      : []),
    ...(notOptedIn.length > 0
      ? [
          `Not asked: ${names(notOptedIn)} did not opt in to revocation (revocable: true), so would not hear it; its identity stays. Wait for the release, or, for a holder known to be gone, release --force.`,
        ]
      : []),
  ];
  return { out: lines.length > 0 ? lines.join('\n') : `Nobody holds "${name}".`, code };
}
