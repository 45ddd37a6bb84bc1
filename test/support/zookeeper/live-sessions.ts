import { setTimeout as sleep } from 'node:timers/promises';

import { fourLetter } from './four-letter';

/** One reading of `dump`'s session part: the sessions listed, and how many the tracker said it had. */
function readDump(reply: string, port: number): { listed: bigint[]; count: number } {
  const [tracker] = reply.split('ephemeral nodes dump:');
  const header = /^Session Sets \((\d+)\)\/\((\d+)\):$/m.exec(tracker);
  if (!tracker.startsWith('SessionTracker dump:') || !header)
    throw new Error(`unexpected reply to dump on port ${port}: ${reply}`);
  const listed = [...tracker.matchAll(/^\t0x([0-9a-f]+)$/gm)].map((match) => BigInt(`0x${match[1]}`));
  return { listed, count: Number(header[2]) };
}

/**
 * The sessions a standalone server (or an ensemble's leader) tracks right now, from the
 * `SessionTracker dump` part of the `dump` four-letter command: one tab-indented `0x…`
 * line per session. A session is gone from it once closed or expired.
 *
 * One reply can miss a live session: the server lists its expiry buckets from a copy of
 * their keys, and a session touched meanwhile moves to a bucket made after the copy
 * (ZooKeeper 3.8's `ExpiryQueue.dump`); seen on a loaded machine, a session re-attached a
 * moment before missing from one reply and back in the next. The header says how many
 * sessions the tracker holds (`Session Sets (buckets)/(sessions)`): a reply is taken once
 * it lists exactly that many, each once.
 */
export async function liveSessions(port: number): Promise<Set<bigint>> {
  for (let attempt = 1; ; attempt++) {
    const { listed, count } = readDump(await fourLetter(port, 'dump'), port);
    const sessions = new Set(listed);
    if (sessions.size === count && listed.length === count) return sessions;
    if (attempt === 100)
      throw new Error(`dump on port ${port} never listed as many sessions as it counted (${count}) in 100 replies`);
    await sleep(5);
  }
}

/** A session id as the library prints it (hex, leading zeros) or as ZooKeeper does (`0x…`). */
export const sessionIdOf = (hex: string): bigint => BigInt(hex.startsWith('0x') ? hex : `0x${hex}`);
