import { fourLetter } from '../../test/support/zookeeper/four-letter.js';

/** The watches ZooKeeper holds: in all (`wchs`) and those of the given sessions (`wchc`, one line per session and path). */
export interface ServerWatches {
  readonly total: number;
  readonly ours: number;
  /** `session path` of each of ours, for a failure message. */
  readonly oursListed: string[];
}

export async function serverWatches(port: number, sessions: readonly bigint[]): Promise<ServerWatches> {
  const summary = await fourLetter(port, 'wchs');
  const total = /Total watches:\s*(\d+)/.exec(summary)?.[1];
  if (total === undefined) throw new Error(`unexpected reply to wchs: ${summary}`);
  // wchc: a "0x<session>" line, then one tab-indented line per path that session watches.
  const byConnection = await fourLetter(port, 'wchc');
  const ourSessions = new Set(sessions);
  const oursListed: string[] = [];
  let current: bigint | undefined;
  for (const line of byConnection.split('\n')) {
    if (/^0x[0-9a-f]+$/i.test(line.trim()) && !line.startsWith('\t')) current = BigInt(line.trim());
    else if (line.startsWith('\t') && current !== undefined && ourSessions.has(current))
      oursListed.push(`0x${current.toString(16)} ${line.trim()}`);
  }
  return { total: Number(total), ours: oursListed.length, oursListed };
}
