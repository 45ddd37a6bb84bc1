import { waitFor } from '../wait-for';
import { fourLetter } from './four-letter';
import type { ZkEnsemble } from './zk-ensemble';

/** A `mntr` value of one server, e.g. `zk_synced_followers`; undefined when it does not answer. */
async function monitored(port: number, key: string): Promise<string | undefined> {
  const reply = await fourLetter(port, 'mntr', 1000).catch(() => '');
  return new RegExp(`^${key}\\t(.*)$`, 'm').exec(reply)?.[1];
}

/**
 * Waits until every running server of `ensemble` is back in the quorum: each answers
 * `ruok` with `imok` and `srvr` with a mode (it serves clients), and the leader counts
 * all the others as synced followers (`mntr`), so none is still catching up.
 */
export async function waitQuorumJoined(ensemble: ZkEnsemble, timeoutMs = 30_000): Promise<void> {
  const running = ensemble.servers.filter((s) => s.running);
  let last = '';
  await waitFor(
    async () => {
      const answers = await Promise.all(
        running.map(
          async (s) => [await fourLetter(s.clientPort, 'ruok', 1000).catch(() => ''), await s.mode()] as const,
        ),
      );
      last = answers.map(([ok, mode]) => `${ok || '-'}/${mode ?? '-'}`).join(', ');
      if (!answers.every(([ok, mode]) => ok === 'imok' && mode !== undefined)) return false;
      const leader = running[answers.findIndex(([, mode]) => mode === 'leader')];
      if (!leader) return false;
      return (await monitored(leader.clientPort, 'zk_synced_followers')) === String(running.length - 1);
    },
    { timeoutMs, intervalMs: 50, what: () => `every running server to join the quorum (ruok/mode: ${last})` },
  );
}

/**
 * Ephemeral nodes under `prefix` as one server's data tree lists them (`dump`, section
 * "ephemeral nodes dump"), whoever owns them.
 */
export async function ephemeralsUnder(port: number, prefix: string): Promise<string[]> {
  const reply = await fourLetter(port, 'dump');
  const start = reply.indexOf('ephemeral nodes dump:');
  const end = reply.indexOf('Connections dump:');
  if (start < 0) throw new Error(`unexpected reply to dump on port ${port}: ${reply}`);
  const section = reply.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/^\t(\/.*)$/gm)].map((m) => m[1]).filter((path) => path.startsWith(`${prefix}/`));
}
