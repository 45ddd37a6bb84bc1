import { execFile } from 'node:child_process';

import { fourLetter } from '../../lib/core/zookeeper/session/four-letter.js';

/**
 * What the ZooKeeper servers say of themselves, through their four-letter words (`mntr`,
 * `wchs`, `cons`, `dump`) and, for the servers the benchmark started, the JVM's own tools:
 * the figures the scale scenarios (11 and 12) read on the server side. Each server is named
 * by an address `host:port` (a chroot after it ignored), as `serversOf` gives them.
 */

/**
 * The numeric lines of a server's `mntr` (`zk_num_alive_connections`, `zk_znode_count`,
 * `zk_ephemerals_count`, `zk_approximate_data_size`, `zk_packets_received`,
 * `zk_global_sessions`…), by name.
 */
export async function mntr(address: string): Promise<Record<string, number>> {
  const reply = await ask(address, 'mntr');
  const values: Record<string, number> = {};
  for (const line of reply.split('\n')) {
    const [key, value] = line.split('\t');
    if (key && value !== undefined && /^-?\d+(\.\d+)?$/.test(value.trim())) values[key] = Number(value);
  }
  if (!Object.keys(values).length) throw new Error(`mntr on ${address} gave no figures: ${reply.slice(0, 200)}`);
  return values;
}

/**
 * `mntr` of every server, summed key by key: what every server holds (connections,
 * watches, packets). Replicated figures (znodes, data size) are read from one server.
 */
export async function mntrSum(servers: readonly string[]): Promise<Record<string, number>> {
  const replies = await Promise.all(servers.map(mntr));
  const sum: Record<string, number> = {};
  for (const reply of replies) for (const [key, value] of Object.entries(reply)) sum[key] = (sum[key] ?? 0) + value;
  return sum;
}

/** Watches the servers hold, summed (`wchs`: "Total watches:N"). */
export async function totalWatches(servers: readonly string[]): Promise<number> {
  const replies = await Promise.all(servers.map((address) => ask(address, 'wchs')));
  return replies.reduce((sum, reply) => {
    const total = /Total watches:\s*(\d+)/.exec(reply)?.[1];
    if (total === undefined) throw new Error(`wchs gave no total: ${reply.slice(0, 200)}`);
    return sum + Number(total);
  }, 0);
}

/**
 * How many of the sessions `ids` (hex, as `ZkSession.id`) appear in the reply to `word`
 * of any server: `cons` lists every connection with its session (`sid=0x…`), `dump` the
 * sessions the leader (or a standalone server) tracks.
 */
export async function sessionsListed(
  servers: readonly string[],
  word: 'cons' | 'dump',
  ids: readonly string[],
): Promise<number> {
  const replies = await Promise.all(servers.map((address) => ask(address, word)));
  const listed = new Set<string>();
  for (const reply of replies) for (const [hex] of reply.matchAll(/0x[0-9a-f]+/g)) listed.add(hex);
  return ids.filter((id) => listed.has(serverSid(id))).length;
}

/**
 * The ephemeral nodes of the session `id` (hex, as `ZkSession.id`) in a server's `dump`
 * ("Sessions with Ephemerals": each session's line, then one tab-indented path per node).
 * Every server holds the data tree, so any one of them answers.
 */
export async function ephemeralsOf(address: string, id: string): Promise<number> {
  const reply = await ask(address, 'dump');
  const section = reply.slice(Math.max(0, reply.indexOf('Sessions with Ephemerals')));
  const lines = section.split('\n');
  const own = lines.indexOf(`${serverSid(id)}:`);
  if (own < 0) return 0;
  let count = 0;
  for (const line of lines.slice(own + 1)) {
    if (!/^\s+\//.test(line)) break;
    count++;
  }
  return count;
}

/**
 * Heap the given server JVMs use after a full collection (`jcmd <pid> GC.run`, then
 * `GC.heap_info`), summed, in bytes; null when a figure cannot be had (no pid known, no
 * jcmd, an answer not understood). A full collection stops a server for a moment: never
 * inside a measured window.
 */
export async function serverHeapAfterGc(pids: readonly number[]): Promise<number | null> {
  if (!pids.length) return null;
  try {
    const used = await Promise.all(
      pids.map(async (pid) => {
        await jcmd(pid, 'GC.run');
        const info = await jcmd(pid, 'GC.heap_info');
        const kb = /\bused (\d+)K/.exec(info)?.[1];
        if (kb === undefined) throw new Error(`GC.heap_info of ${pid}: ${info.slice(0, 200)}`);
        return Number(kb) * 1024;
      }),
    );
    return used.reduce((a, b) => a + b, 0);
  } catch {
    return null;
  }
}

/** A four-letter word to the server at `address`; long replies (`cons`, `dump` of 1,000 sessions) get 10 s. */
function ask(address: string, word: string): Promise<string> {
  const [host, port] = address.split('/')[0].split(':');
  return fourLetter(host, Number(port), word, { timeoutMs: 10_000 });
}

/** A session id as the servers print it: `0x`, no leading zeros. */
function serverSid(id: string): string {
  return `0x${BigInt(`0x${id}`).toString(16)}`;
}

function jcmd(pid: number, command: string): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile('jcmd', [String(pid), command], { timeout: 30_000 }, (error, stdout) =>
      error ? reject(error) : resolve(stdout),
    ),
  );
}
