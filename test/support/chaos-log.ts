import { closeSync, openSync, readSync } from 'node:fs';

/**
 * The chaos test's shared log (written by test/workers/chaos.worker.ts and the test), and
 * the invariants checked on it. Lines: `<kind> <id> <token or -> <t> [details]`, where a
 * section's id is `<worker>.<incarnation>.<n>` and `t` is CLOCK_MONOTONIC in ns.
 *
 *   enter   <section> <token> <t> <value read> <writer read> [long=<ms>] [aborted-at-entry]
 *   aborted <section> <token> <t> <reason>      the lock's signal aborted
 *   done    <section> <token> <t> <value written>
 *   abandon <section> <token> <t>               aborted when about to write: no write
 *   exit    <section> <token> <t>               released
 *   killed  <worker>.<incarnation> - <t>        (by the test) SIGKILLed, exit seen
 *   # ...                                       (by the test) the fault schedule
 */
export interface Section {
  readonly id: string;
  /** `<worker>.<incarnation>`: one process. */
  readonly process: string;
  readonly token: bigint;
  readonly enter: bigint;
  readonly abortedAtEntry: boolean;
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

const INFINITY = 1n << 80n;

export function parseChaosLog(text: string): ChaosLog {
  const lines = text.split('\n').filter((line) => line !== '');
  const byId = new Map<string, Section>();
  const killedAt = new Map<string, bigint>();
  const trouble: string[] = [];
  for (const line of lines) {
    if (line.startsWith('#')) continue;
    const [kind, id, token, t, ...details] = line.split(' ');
    const at = BigInt(t);
    if (kind === 'enter') {
      byId.set(id, {
        id,
        process: id.slice(0, id.lastIndexOf('.')),
        token: BigInt(token),
        enter: at,
        valueRead: Number(details[0]),
        writerRead: details[1],
        abortedAtEntry: details.includes('aborted-at-entry'),
        end: { kind: 'open', t: INFINITY },
        lines: [line],
      });
      continue;
    }
    if (kind === 'killed') killedAt.set(id, at);
    if (kind === 'timeout' || kind === 'error') trouble.push(line);
    const section = byId.get(id);
    if (!section) continue;
    section.lines.push(line);
    if (kind === 'aborted') section.aborted ??= at;
    else if (kind === 'done') section.end = { kind: 'done', t: at, value: Number(details[0]) };
    else if (kind === 'abandon') section.end = { kind: 'abandon', t: at };
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

export interface Violation {
  readonly invariant: string;
  readonly what: string;
  readonly lines: string[];
}

/**
 * (a) Mutual exclusion. Section X, entered first, and Y overlap when Y entered before X
 * ended (its `done`/`abandon` line, or its process's death). That is allowed only if X's
 * signal had aborted before Y entered: X then knows, and writes nothing more. Also: no
 * section may write after its signal aborted, and every section ends.
 */
export function checkExclusion(log: ChaosLog): Violation[] {
  const violations: Violation[] = [];
  const inside: Section[] = [];
  for (const y of log.sections) {
    for (const x of inside) {
      if (x.end.t <= y.enter) continue;
      if (x.aborted !== undefined && x.aborted <= y.enter) continue;
      violations.push({ invariant: 'a', what: `${y.id} entered while ${x.id} was inside with a trusted lock`, lines: [...x.lines, ...y.lines] });
    }
    inside.push(y);
    for (let i = inside.length - 1; i >= 0; i--) if (inside[i].end.t <= y.enter) inside.splice(i, 1);
  }
  for (const s of log.sections) {
    if (s.end.kind === 'done' && s.aborted !== undefined && s.aborted < s.end.t) {
      violations.push({ invariant: 'a', what: `${s.id} wrote after its lock's signal aborted`, lines: s.lines });
    }
    if (s.end.kind === 'open') violations.push({ invariant: 'a', what: `${s.id} never ended (and its process was not killed)`, lines: s.lines });
  }
  return violations;
}

/**
 * (b) No lost or invented update. Each section reads `<value> <writer>` and a writing
 * section writes `<value + 1> <itself>` (atomically: written aside, renamed over). A
 * section killed between its write and its `done` line wrote without saying so; its write
 * is known from the next reader (or the final file) naming it. So: the final value = done sections + such killed writers, every
 * `done` write was read by someone (or is the final one), and every value read is the one
 * its writer wrote.
 */
export function checkCounter(log: ChaosLog, finalContent: string): Violation[] {
  const violations: Violation[] = [];
  const [finalValue, finalWriter] = finalContent.trim().split(' ');
  const byId = new Map(log.sections.map((s) => [s.id, s]));
  const seen = new Map<string, string[]>(); // writer -> lines that read its write
  for (const s of log.sections) if (s.writerRead !== '-') seen.set(s.writerRead, [...(seen.get(s.writerRead) ?? []), s.lines[0]]);
  if (finalWriter !== '-') seen.set(finalWriter, [...(seen.get(finalWriter) ?? []), `(final counter file) ${finalContent.trim()}`]);

  const done = log.sections.filter((s) => s.end.kind === 'done');
  const killedWriters = log.sections.filter((s) => s.end.kind === 'killed' && seen.has(s.id));
  for (const [writer, readers] of seen) {
    const w = byId.get(writer);
    if (!w || (w.end.kind !== 'done' && w.end.kind !== 'killed')) {
      violations.push({ invariant: 'b', what: `${writer} is named as a writer but did not write`, lines: [...(w?.lines ?? []), ...readers] });
    }
  }
  for (const s of log.sections) {
    const w = byId.get(s.writerRead);
    if (w && s.valueRead !== w.valueRead + 1) {
      violations.push({ invariant: 'b', what: `${s.id} read ${s.valueRead} from ${w.id}, which wrote ${w.valueRead + 1}`, lines: [...w.lines, s.lines[0]] });
    }
  }
  for (const s of done) {
    if (!seen.has(s.id)) violations.push({ invariant: 'b', what: `the write of ${s.id} was lost (overwritten before anyone read it)`, lines: s.lines });
  }
  if (Number(finalValue) !== done.length + killedWriters.length) {
    violations.push({
      invariant: 'b',
      what: `counter is ${finalValue}, but ${done.length} sections are done and ${killedWriters.length} killed ones wrote`,
      lines: [`(final counter file) ${finalContent.trim()}`, ...killedWriters.map((s) => s.lines[0])],
    });
  }
  return violations;
}

/**
 * (c) Fencing tokens strictly increase in the order sections were entered. Sections whose
 * signal had already aborted when they entered are left out: their holder knows at once
 * that the lock is not trusted and never writes (a fenced resource would refuse them too).
 */
export function checkTokens(log: ChaosLog): Violation[] {
  const violations: Violation[] = [];
  let previous: Section | undefined;
  for (const s of log.sections) {
    if (s.abortedAtEntry) continue;
    if (previous && s.token <= previous.token) {
      violations.push({ invariant: 'c', what: `${s.id} entered after ${previous.id} with token ${s.token} <= ${previous.token}`, lines: [previous.lines[0], s.lines[0]] });
    }
    previous = s;
  }
  return violations;
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
