import { fourLetter } from './zookeeper/four-letter';

/**
 * ZooKeeper's own record of watches (`wchc`): for each watched path, how many sessions
 * watch it. Only paths under `prefix` are counted.
 */
export async function watchedPaths(port: number, prefix: string): Promise<Map<string, number>> {
  const reply = await fourLetter(port, 'wchc');
  const counts = new Map<string, number>();
  for (const line of reply.split('\n')) {
    const path = line.trim();
    if (!line.startsWith('\t') || !path.startsWith(prefix)) continue;
    counts.set(path, (counts.get(path) ?? 0) + 1);
  }
  return counts;
}
