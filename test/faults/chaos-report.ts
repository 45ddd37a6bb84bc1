import type { ChaosLog, Section } from '../support/chaos-log';
import { checkCounter, checkExclusion, checkTokens, peakHolders, type Violation } from '../support/chaos-invariants';
import type { Workloads } from '../workers/chaos-workloads';

/** The chaos test's verdict on its log, per workload, and the lines it prints. */

/** (a) to (c) on every resource: the lock and each lock of the multi-locks with their counters and tokens, the semaphore with its capacity. */
export function checkWorkloads(log: ChaosLog, workloads: Workloads, counterOf: (path: string) => string): Violation[] {
  const locks = [
    { name: workloads.lock.name, counter: workloads.lock.counter },
    ...workloads.multi.names.map((name) => ({ name, counter: workloads.multi.counters[name] })),
  ];
  return [
    ...locks.flatMap(({ name, counter }) => [
      ...checkExclusion(log, name),
      ...checkCounter(log, name, counterOf(counter)),
      ...checkTokens(log, name),
    ]),
    ...checkExclusion(log, workloads.lease.name, workloads.lease.maxLeases),
  ];
}

/** `168 sections (167 done, 1 abandoned, 0 killed), 1 lost`: lost = its grant's signal aborted. */
function tally(sections: readonly Section[]): string {
  const count = (kind: string) => sections.filter((s) => s.end.kind === kind).length;
  const lost = sections.filter((s) => s.aborted !== undefined).length;
  return `${sections.length} sections (${count('done')} done, ${count('abandon')} abandoned, ${count('killed')} killed), ${lost} lost`;
}

/** What the run did, workload by workload: enough to see that each was exercised, and how the faults struck it. */
export function summary(log: ChaosLog, workloads: Workloads, counterOf: (path: string) => string): string[] {
  const { lock, multi, lease } = workloads;
  const on = (resource: string) => log.sections.filter((s) => s.resource === resource);

  const multiSections = log.sections.filter((s) => multi.names.includes(s.resource));
  const groups = new Map<string, Section[]>();
  for (const s of multiSections) groups.set(s.group, [...(groups.get(s.group) ?? []), s]);
  const bySize = new Map<number, number>();
  for (const g of groups.values()) bySize.set(g.length, (bySize.get(g.length) ?? 0) + 1);
  const sizes = [...bySize].sort(([a], [b]) => a - b).map(([size, n]) => `${n} of ${size}`);
  const lostGroups = [...groups.values()].filter((g) => g.some((s) => s.aborted !== undefined)).length;

  const peak = peakHolders(log, lease.name);
  return [
    `lock ${lock.name}: ${tally(on(lock.name))}, counter ${counterOf(lock.counter).trim()}`,
    `multi-lock ${multi.names.join(',')}: ${groups.size} grants (${sizes.join(', ')} locks), ${lostGroups} lost`,
    ...multi.names.map((name) => `  ${name}: ${tally(on(name))}, counter ${counterOf(multi.counters[name]).trim()}`),
    `leases ${lease.name} (maxLeases ${lease.maxLeases}, ${lease.loops} loops a worker): ${tally(on(lease.name))}, ` +
      `${peak.peak} trusted holders at once on ${peak.times} entries`,
  ];
}

/** The first few violations of each invariant on each resource, with their log lines. */
export function describeViolations(violations: readonly Violation[]): string {
  const heading = (v: Violation) => `(${v.invariant})${v.resource ? ` on ${v.resource}` : ''}`;
  return [...new Set(violations.map(heading))]
    .map((title) => {
      const all = violations.filter((v) => heading(v) === title);
      const shown = all.slice(0, 5).map((v) => [`  ${v.what}`, ...v.lines.map((l) => `      ${l}`)].join('\n'));
      return [`${title} ${all.length} violation(s)${all.length > 5 ? ', the first 5' : ''}:`, ...shown].join('\n');
    })
    .join('\n');
}
