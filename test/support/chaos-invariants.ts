import type { ChaosLog, Section } from './chaos-log';

/** The invariants the chaos test checks on its log (see chaos-log.ts), one resource at a time. */
export interface Violation {
  readonly invariant: string;
  /** The lock or semaphore it concerns, if one. */
  readonly resource?: string;
  readonly what: string;
  readonly lines: string[];
}

const of = (log: ChaosLog, resource: string): Section[] => log.sections.filter((s) => s.resource === resource);

/**
 * Each section of `resource` as it entered, with the sections inside with a *trusted*
 * grant at that moment: entered earlier, not ended (its `done`/`abandon` line, or its
 * process's death), and whose signal had not aborted before it entered. A section whose
 * signal aborted knows, and writes nothing more: it no longer counts.
 */
function* entries(sections: readonly Section[]): Generator<{ section: Section; trusted: Section[] }> {
  const inside: Section[] = [];
  for (const y of sections) {
    const trusted = inside.filter((x) => x.end.t > y.enter && !(x.aborted !== undefined && x.aborted <= y.enter));
    yield { section: y, trusted };
    inside.push(y);
    for (let i = inside.length - 1; i >= 0; i--) if (inside[i].end.t <= y.enter) inside.splice(i, 1);
  }
}

/**
 * (a) Mutual exclusion, or for a semaphore at most `capacity` holders: no section enters
 * while `capacity` others are inside with a trusted grant. Also: no section writes after
 * its signal aborted, and every section ends.
 */
export function checkExclusion(log: ChaosLog, resource: string, capacity = 1): Violation[] {
  const violations: Violation[] = [];
  for (const { section: y, trusted } of entries(of(log, resource))) {
    if (trusted.length < capacity) continue;
    const who = trusted.map((x) => x.id).join(', ');
    violations.push({
      invariant: 'a',
      resource,
      what: `${y.id} entered while ${who} ${trusted.length > 1 ? 'were' : 'was'} inside ${resource} with a trusted grant (at most ${capacity} at once)`,
      lines: [...trusted.flatMap((x) => x.lines), ...y.lines],
    });
  }
  for (const s of of(log, resource)) {
    if (s.end.kind === 'done' && s.aborted !== undefined && s.aborted < s.end.t) {
      violations.push({
        invariant: 'a',
        resource,
        what: `${s.id} wrote after its grant's signal aborted`,
        lines: s.lines,
      });
    }
    if (s.end.kind === 'open')
      violations.push({
        invariant: 'a',
        resource,
        what: `${s.id} never ended (and its process was not killed)`,
        lines: s.lines,
      });
  }
  return violations;
}

/** The most sections of `resource` seen inside with a trusted grant at once, and how many entries reached that many. */
export function peakHolders(log: ChaosLog, resource: string): { peak: number; times: number } {
  let peak = 0;
  let times = 0;
  for (const { trusted } of entries(of(log, resource))) {
    const holders = trusted.length + 1;
    if (holders > peak) [peak, times] = [holders, 0];
    if (holders === peak) times++;
  }
  return { peak, times };
}

/**
 * (b) No lost or invented update of `resource`'s counter. Each section reads
 * `<value> <writer>` and a writing section writes `<value + 1> <itself>` (atomically:
 * written aside, renamed over). A section killed between its write and its `done` line
 * wrote without saying so; its write is known from the next reader (or the final file)
 * naming it. So: the final value = done sections + such killed writers, every `done` write
 * was read by someone (or is the final one), and every value read is the one its writer wrote.
 */
export function checkCounter(log: ChaosLog, resource: string, finalContent: string): Violation[] {
  const violations: Violation[] = [];
  const sections = of(log, resource);
  const [finalValue, finalWriter] = finalContent.trim().split(' ');
  const final = `(final counter file of ${resource}) ${finalContent.trim()}`;
  const byId = new Map(sections.map((s) => [s.id, s]));
  const seen = new Map<string, string[]>(); // writer -> lines that read its write
  for (const s of sections)
    if (s.writerRead !== '-') seen.set(s.writerRead, [...(seen.get(s.writerRead) ?? []), s.lines[0]]);
  if (finalWriter !== '-') seen.set(finalWriter, [...(seen.get(finalWriter) ?? []), final]);

  const done = sections.filter((s) => s.end.kind === 'done');
  const killedWriters = sections.filter((s) => s.end.kind === 'killed' && seen.has(s.id));
  for (const [writer, readers] of seen) {
    const w = byId.get(writer);
    if (!w || (w.end.kind !== 'done' && w.end.kind !== 'killed')) {
      violations.push({
        invariant: 'b',
        resource,
        what: `${writer} is named as a writer but did not write`,
        lines: [...(w?.lines ?? []), ...readers],
      });
    }
  }
  for (const s of sections) {
    const w = byId.get(s.writerRead);
    if (w && s.valueRead !== w.valueRead + 1) {
      violations.push({
        invariant: 'b',
        resource,
        what: `${s.id} read ${s.valueRead} from ${w.id}, which wrote ${w.valueRead + 1}`,
        lines: [...w.lines, s.lines[0]],
      });
    }
  }
  for (const s of done) {
    if (!seen.has(s.id))
      violations.push({
        invariant: 'b',
        resource,
        what: `the write of ${s.id} was lost (overwritten before anyone read it)`,
        lines: s.lines,
      });
  }
  if (Number(finalValue) !== done.length + killedWriters.length) {
    violations.push({
      invariant: 'b',
      resource,
      what: `counter of ${resource} is ${finalValue}, but ${done.length} sections are done and ${killedWriters.length} killed ones wrote`,
      lines: [final, ...killedWriters.map((s) => s.lines[0])],
    });
  }
  return violations;
}

/**
 * (c) Fencing tokens of `resource` strictly increase in the order sections were entered.
 * Sections whose signal had already aborted when they entered are left out: their holder
 * knows at once that the lock is not trusted and never writes (a fenced resource would
 * refuse them too).
 */
export function checkTokens(log: ChaosLog, resource: string): Violation[] {
  const violations: Violation[] = [];
  let previous: Section | undefined;
  for (const s of of(log, resource)) {
    if (s.abortedAtEntry || s.token === undefined) continue;
    if (previous && s.token <= previous.token!) {
      violations.push({
        invariant: 'c',
        resource,
        what: `${s.id} entered after ${previous.id} with token ${s.token} <= ${previous.token}`,
        lines: [previous.lines[0], s.lines[0]],
      });
    }
    previous = s;
  }
  return violations;
}
