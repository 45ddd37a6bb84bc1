import type { MetricRow, RoundTripRow, TargetRow } from '../../bench/bench.results';
import { explainMiss, missedTargetNotes } from '../../bench/report/missed-targets.notes';
import type { ClientCpuRow } from '../../bench/support/client-cpu';

/** A read-heavy miss like the one measured: same requests per cycle, ours slower per cycle. */
const metrics: MetricRow[] = [
  {
    id: 'readHeavy.readerCyclesPerSec',
    scenario: 6,
    label: 'reader throughput',
    unit: 'cycles/s',
    better: 'higher',
    rounds: {},
    median: { ours: 2000, curator: 4000 }, // 500 µs and 250 µs per cycle
    ratio: { curator: 0.5 },
    ratioRange: { curator: [0.5, 0.5] },
  },
];
const row = (impl: 'ours' | 'curator'): RoundTripRow => ({
  scenario: 6,
  per: 'read or write cycle (read-heavy)',
  impl,
  byOp: { create: 1, getChildren: 1, remove: 1 },
  requests: 3,
  notifications: 0,
});
const target: TargetRow = {
  id: '6',
  label: 'read-heavy reader throughput: ours ÷ Curator',
  measured: '0.5×',
  threshold: '>= 2×',
  pass: false,
  basis: {
    a: { metricId: 'readHeavy.readerCyclesPerSec', impl: 'ours', scenario: 6, per: 'read or write cycle' },
    b: { metricId: 'readHeavy.readerCyclesPerSec', impl: 'curator', scenario: 6, per: 'read or write cycle' },
  },
};
const cpu = (ours: number, curator: number): ClientCpuRow[] => [
  { scenario: 6, title: 'read-heavy', busy: { ours, curator } },
];

describe('missed-target notes with the client CPU', () => {
  it('say how much of the gap the client CPU per unit covers', () => {
    // ours: 95% of a core × 500 µs = 475 µs; Curator: 60% × 250 µs = 150 µs; the gap is 250 µs.
    const note = explainMiss(target, metrics, [row('ours'), row('curator')], cpu(0.95, 0.6))!;
    expect(note).toContain('Client CPU while the scenario ran: ours 95% of a core, curator 60% of a core');
    expect(note).toContain('about 475 µs of client CPU per unit against 150 µs');
    expect(note).toContain("The difference, 325 µs, is 100% of the 250 µs gap: the client's own work explains it.");
  });

  it('say when it explains only part of it', () => {
    // ours: 40% × 500 = 200 µs; Curator 60% × 250 = 150 µs: 50 µs of a 250 µs gap.
    const note = explainMiss(target, metrics, [row('ours'), row('curator')], cpu(0.4, 0.6))!;
    expect(note).toContain(
      "The difference, 50.0 µs, is 20% of the 250 µs gap: the client's own work explains part of it.",
    );
  });

  it('say nothing of CPU when the run did not measure it', () => {
    const note = explainMiss(target, metrics, [row('ours'), row('curator')])!;
    expect(note).not.toContain('Client CPU');
    expect(note).not.toContain('ZooKeeper server');
    expect(note).toContain('6 missed');
  });

  it('say what the server spent per unit and how many cores it would need at the rate asked', () => {
    // Server: 90% of a core while ours ran (× 500 µs = 450 µs per cycle), 80% while Curator ran (× 250 = 200 µs).
    // Asked: 2 × Curator's 4,000 cycles/s = 8,000/s; at the cheaper 200 µs each that is 1.6 cores of server CPU.
    const rows: ClientCpuRow[] = [
      { scenario: 6, title: 'read-heavy', busy: { ours: 0.95, curator: 0.6 }, server: { ours: 0.9, curator: 0.8 } },
    ];
    const note = explainMiss(target, metrics, [row('ours'), row('curator')], rows)!;
    expect(note).toContain(
      'The ZooKeeper server meanwhile: 90% of a core while ours ran, 80% of a core while curator ran; about 450 µs of server CPU per unit against 200 µs.',
    );
    expect(note).toContain(
      'At the rate asked (8,000/s), even at the cheaper 200 µs per unit, the server would use 1.60 cores.',
    );
  });

  it('say no rate for a latency target', () => {
    const latency: MetricRow[] = [{ ...metrics[0], unit: 'µs', better: 'lower', median: { ours: 500, curator: 250 } }];
    const rows: ClientCpuRow[] = [{ scenario: 6, title: 'read-heavy', busy: {}, server: { ours: 0.9, curator: 0.8 } }];
    const note = explainMiss({ ...target, threshold: '<= 1×' }, latency, [row('ours'), row('curator')], rows)!;
    expect(note).toContain('about 450 µs of server CPU per unit against 200 µs.');
    expect(note).not.toContain('rate asked');
  });
});

describe('missed-target notes with the floors beside them', () => {
  const uncontended: MetricRow = { ...metrics[0], id: 'uncontended.cyclesPerSec', scenario: 1 };
  const cycle = (impl: 'ours' | 'curator'): RoundTripRow => ({ ...row(impl), scenario: 1, per: 'uncontended cycle' });
  const c1: TargetRow = {
    ...target,
    id: '1c',
    label: 'uncontended cycles/s: ours ÷ Curator',
    measured: '0.946× [0.731–1.09]',
    threshold: '>= 1.3×',
    basis: {
      a: { metricId: 'uncontended.cyclesPerSec', impl: 'ours', scenario: 1, per: 'uncontended cycle' },
      b: { metricId: 'uncontended.cyclesPerSec', impl: 'curator', scenario: 1, per: 'uncontended cycle' },
    },
  };
  const floor = (id: string, what: string, measured: string): TargetRow => ({
    id,
    label: `uncontended cycles/s: ${what} ÷ Curator (the floor's reach)`,
    measured,
    threshold: 'reported (no target)',
    pass: null,
  });
  const notes = (wire: string): string[] =>
    missedTargetNotes(
      [
        c1,
        floor('1f', "raw loop sending ours' requests together", '1.00× [0.862–1.45]'),
        floor('1g', 'the same requests spoken by hand, no client library', wire),
      ],
      [uncontended],
      [cycle('ours'), cycle('curator')],
    );

  it('list each floor and say when even the best one is below the ratio asked', () => {
    const [note] = notes('1.25× [1.09–1.64]');
    expect(note).toContain(
      "Floors in this run (÷ Curator): 1f, raw loop sending ours' requests together: 1.00×; 1g, the same requests spoken by hand, no client library: 1.25×; every floor is below the 1.3× asked, so nothing sending these requests reached it in this run.",
    );
  });

  it("say when a floor reaches it, so that the rest of the gap is the client's own", () => {
    const [note] = notes('1.31× [1.09–1.64]');
    expect(note).toContain(
      '1g, the same requests spoken by hand, no client library: 1.31×; a floor reaches the 1.3× asked',
    );
  });

  it('add nothing to a miss that has no floors', () => {
    const [note] = missedTargetNotes([target], metrics, [row('ours'), row('curator')]);
    expect(note).not.toContain('Floors');
  });
});
