import { fourLetter } from './four-letter';

/**
 * The sessions a standalone server (or an ensemble's leader) tracks right now, from the
 * `SessionTracker dump` part of the `dump` four-letter command: one tab-indented `0x…`
 * line per session. A session is gone from it once closed or expired.
 */
export async function liveSessions(port: number): Promise<Set<bigint>> {
  const reply = await fourLetter(port, 'dump');
  const [tracker] = reply.split('ephemeral nodes dump:');
  if (!tracker.startsWith('SessionTracker dump:'))
    throw new Error(`unexpected reply to dump on port ${port}: ${reply}`);
  return new Set([...tracker.matchAll(/^\t0x([0-9a-f]+)$/gm)].map((match) => BigInt(`0x${match[1]}`)));
}

/** A session id as the library prints it (hex, leading zeros) or as ZooKeeper does (`0x…`). */
export const sessionIdOf = (hex: string): bigint => BigInt(hex.startsWith('0x') ? hex : `0x${hex}`);
