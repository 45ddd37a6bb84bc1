import { closeSync, openSync, readSync } from 'node:fs';

/**
 * The chaos test's shared log (written by test/workers/chaos*.ts and the test). Lines:
 * `<kind> <id> <token or -> <t> [details]`, `t` being CLOCK_MONOTONIC in ns.
 *
 * Each worker process `<worker>.<incarnation>` runs several loops on one session; each
 * grant of a loop is a *group* `<process>.<n>` (the loop on the one lock `counter`) or
 * `<process>.<loop>-<n>` (loops `multi`, `lease1`, `lease2`, ...). A group holds one
 * *section* per resource it guards: the group itself on `counter`, `<group>@<name>` for
 * a lock of a multi-lock or the lease of a semaphore.
 *
 *   enter   <section> <token or -> <t> <value or -> <writer or -> [long=<ms>] [aborted-at-entry] [list=<names asked for>]
 *   aborted <group> <token or -> <t> <reason>   the grant's signal aborted
 *   done    <section> <token or -> <t> [<value written>]
 *   abandon <section> <token or -> <t>          aborted when about to write: no write
 *   exit    <group> <token or -> <t>            released
 *   timeout <process> - <t> loop=<loop>          (trouble) no grant within the acquire timeout
 *   error   <process> - <t> <stack>              (trouble) the worker crashed
 *   killed  <process> - <t>                      (by the test) SIGKILLed, exit seen
 *   # ...                                        (by the test) the fault schedule
 */
export interface Section {
  readonly id: string;
  /** `<worker>.<incarnation>`: one process. */
  readonly process: string;
  /** `<worker>/<loop>`: one loop, across the worker's incarnations. */
  readonly loop: string;
  readonly group: string;
  /** The lock or semaphore it guards. */
  readonly resource: string;
  readonly token: bigint | undefined;
  readonly enter: bigint;
  readonly abortedAtEntry: boolean;
  /** The counter it read (resources with a counter file only). */
  readonly valueRead: number;
  readonly writerRead: string;
  /** When the signal aborted, if it did. */
  aborted?: bigint;
  /** How it ended: `done` (wrote), `abandon`, `killed` (its process), or `open` (never ended). */
  end: { kind: 'done' | 'abandon' | 'killed' | 'open'; t: bigint; value?: number };
  readonly lines: string[];
}

export interface ChaosLog {
  /** Sections in the order they were entered (by `t`). */
  readonly sections: Section[];
  readonly lines: string[];
  /** Lines of kinds the workers use for trouble: `timeout`, `error`. */
  readonly trouble: string[];
}

/** The resource of a section without `@`: the single lock's. */
export const COUNTER_LOCK = 'counter';
const INFINITY = 1n << 80n;

/** What a group or section id says: `w2.1.multi-7@m3` is process w2.1, loop w2/multi, group w2.1.multi-7, resource m3. */
export function idParts(id: string): { process: string; loop: string; group: string; resource: string } {
  const at = id.indexOf('@');
  const group = at < 0 ? id : id.slice(0, at);
  const [worker, incarnation, step = ''] = group.split('.');
  const dash = step.lastIndexOf('-');
  return {
    process: `${worker}.${incarnation}`,
    loop: `${worker}/${dash < 0 ? 'lock' : step.slice(0, dash)}`,
    group,
    resource: at < 0 ? COUNTER_LOCK : id.slice(at + 1),
  };
}

export function parseChaosLog(text: string): ChaosLog {
  const lines = text.split('\n').filter((line) => line !== '');
  const byId = new Map<string, Section>();
  const byGroup = new Map<string, Section[]>();
  const killedAt = new Map<string, bigint>();
  const trouble: string[] = [];
  for (const line of lines) {
    if (line.startsWith('#')) continue;
    const [kind, id, token, t, ...details] = line.split(' ');
    const at = BigInt(t);
    if (kind === 'enter') {
      const section = enterSection(id, token, at, details, line);
      byId.set(id, section);
      byGroup.set(section.group, [...(byGroup.get(section.group) ?? []), section]);
      continue;
    }
    if (kind === 'killed') killedAt.set(id, at);
    if (kind === 'timeout' || kind === 'error') trouble.push(line);
    // aborted and exit are said once per group: they apply to each of its sections.
    const sections = byId.has(id) ? [byId.get(id)!] : (byGroup.get(id) ?? []);
    for (const section of sections) {
      section.lines.push(line);
      if (kind === 'aborted') section.aborted ??= at;
      else if (kind === 'done')
        section.end = { kind: 'done', t: at, value: details[0] === undefined ? undefined : Number(details[0]) };
      else if (kind === 'abandon') section.end = { kind: 'abandon', t: at };
    }
  }
  // A section cut short by a SIGKILL ends when its process did (at the latest when the
  // test saw the exit, which is what `killed` records).
  for (const section of byId.values()) {
    const killed = killedAt.get(section.process);
    if (section.end.kind === 'open' && killed !== undefined) {
      section.end = { kind: 'killed', t: killed };
      section.lines.push(`killed ${section.process} - ${killed}`);
    }
  }
  const sections = [...byId.values()].sort((a, b) => (a.enter < b.enter ? -1 : a.enter > b.enter ? 1 : 0));
  return { sections, lines, trouble };
}

function enterSection(id: string, token: string, at: bigint, details: string[], line: string): Section {
  const { process, loop, group, resource } = idParts(id);
  return {
    id,
    process,
    loop,
    group,
    resource,
    token: token === '-' ? undefined : BigInt(token),
    enter: at,
    valueRead: Number(details[0]),
    writerRead: details[1],
    abortedAtEntry: details.includes('aborted-at-entry'),
    end: { kind: 'open', t: INFINITY },
    lines: [line],
  };
}

/** Reads a file that others keep appending to, a complete line at a time. */
export class LogTail {
  private offset = 0;
  private partial = '';

  constructor(private readonly path: string) {}

  read(): string[] {
    const fd = openSync(this.path, 'r');
    try {
      const chunks: Buffer[] = [];
      for (;;) {
        const buffer = Buffer.alloc(1 << 16);
        const n = readSync(fd, buffer, 0, buffer.length, this.offset);
        if (n === 0) break;
        this.offset += n;
        chunks.push(buffer.subarray(0, n));
      }
      const parts = (this.partial + Buffer.concat(chunks).toString('utf8')).split('\n');
      this.partial = parts.pop()!;
      return parts;
    } finally {
      closeSync(fd);
    }
  }
}
