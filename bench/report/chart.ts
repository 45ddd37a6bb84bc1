import type { BenchResults, MetricRow } from '../results.js';
import { IMPLS, type ImplName, type OtherImpl } from '../workers/impl.protocol.js';
import { format, ratioCell } from './tables.js';

const COLORS: Record<ImplName, string> = { ours: '#2f6fb0', raw: '#8a8f98', kazoo: '#d9822b', curator: '#3a9a5b' };
const WIDTH = 960;
const LABEL_X = 16;
const BAR_X = 90;
const BAR_MAX = 500;
const BAR_H = 16;
const BAR_GAP = 5;
const TITLE_H = 22;
const PANEL_GAP = 16;

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Absolute targets drawn as a dashed line in their panel (ratio targets are in the table). */
const TARGET_LINES: Record<string, string> = {
  'manyLocks.cyclesPerSec': '5000:target 5,000 (forceSync=no)',
  'manyLocks.heapPerLockKB': '2:target ≤ 2 KB',
  'heldLocks.heapPerLockKB': '1:target ≤ 1 KB',
  'reentrant.usPerCall': '5:target < 5 µs',
};

/**
 * Metrics worth a panel: measured values; not the request-count checks, nor drain/N (same
 * ratios as the drain), nor ours-over-ours ratios, nor the scale scenarios' figures of ours
 * alone (11 and 12: their table rows say it all) but the heap per held lock and its target.
 */
function charted(metrics: readonly MetricRow[]): MetricRow[] {
  return metrics.filter(
    (m) =>
      m.id !== 'reentrant.requestsSent' &&
      (!/^(sessions|heldLocks)\./.test(m.id) || m.id === 'heldLocks.heapPerLockKB') &&
      !/^drain\.\d+\.(perHandoffUs|reqNotifPerHandoff)$/.test(m.id) &&
      !/^leases\.\d+\.reqNotifPerGrant$/.test(m.id) &&
      m.unit !== '×' &&
      IMPLS.some((impl) => Number.isFinite(m.median[impl] ?? Number.NaN)),
  );
}

/**
 * A hand-written SVG bar chart: one panel per metric (units differ), one bar per
 * implementation, each panel scaled to its own largest median, value printed at the bar.
 */
export function svgChart(results: BenchResults): string {
  const { meta } = results;
  const mode =
    meta.server.forceSync === false ? 'forceSync=no' : meta.server.forceSync ? 'forceSync=yes' : 'existing server';
  const out: string[] = [];
  let y = 58;
  for (const metric of charted(results.metrics)) {
    const impls = IMPLS.filter((impl) => Number.isFinite(metric.median[impl] ?? Number.NaN));
    const [targetValue, targetLabel] = TARGET_LINES[metric.id]?.split(/:(.*)/) ?? [];
    const target = targetValue === undefined ? undefined : Number(targetValue);
    const max = Math.max(...impls.map((impl) => metric.median[impl]!), target ?? 0, Number.MIN_VALUE);
    const panelTop = y + TITLE_H;
    const direction = metric.better === 'higher' ? 'higher is better' : 'lower is better';
    out.push(
      `<text x="${LABEL_X}" y="${y + 14}" class="title">${escapeXml(`${metric.scenario}. ${metric.label}`)} <tspan class="unit">(${escapeXml(metric.unit)}, ${direction})</tspan></text>`,
    );
    y += TITLE_H;
    for (const impl of impls) {
      const value = metric.median[impl]!;
      const width = Math.max(1, Math.round((value / max) * BAR_MAX));
      const other = impl as OtherImpl;
      const ratio =
        impl !== 'ours' && metric.ratio[other] !== undefined
          ? `  (ours ÷ ${impl} = ${ratioCell(metric.ratio[other], metric.ratioRange[other])})`
          : '';
      out.push(
        `<text x="${LABEL_X}" y="${y + BAR_H - 4}" class="impl">${impl}</text>`,
        `<rect x="${BAR_X}" y="${y}" width="${width}" height="${BAR_H}" rx="2" fill="${COLORS[impl]}"/>`,
        `<text x="${BAR_X + width + 6}" y="${y + BAR_H - 4}" class="value">${escapeXml(format(value) + ratio)}</text>`,
      );
      y += BAR_H + BAR_GAP;
    }
    if (target !== undefined) {
      const x = BAR_X + Math.round((target / max) * BAR_MAX);
      out.push(
        `<line x1="${x}" y1="${panelTop - 3}" x2="${x}" y2="${y - BAR_GAP + 3}" stroke="#c0392b" stroke-width="1.5" stroke-dasharray="4 3"/>`,
        `<text x="${x + 4}" y="${y + 9}" class="target">${escapeXml(targetLabel)}</text>`,
      );
      y += 12;
    }
    y += PANEL_GAP;
  }
  const height = y + 10;
  const subtitle = `${mode}; medians of ${meta.rounds} interleaved rounds, ratios the median of per-round ratios [lowest–highest round]; ${meta.startedAt.slice(0, 10)}; ${meta.machine.cpus} CPUs${meta.quick ? '; --quick (not a measurement)' : ''}`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="Helvetica, Arial, sans-serif">`,
    '<style>.title{font-size:13px;font-weight:bold;fill:#222}.unit{font-weight:normal;fill:#666}.impl{font-size:12px;fill:#333}.value{font-size:12px;fill:#222}.head{font-size:16px;font-weight:bold;fill:#111}.sub{font-size:12px;fill:#555}.target{font-size:11px;fill:#c0392b}</style>',
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    `<text x="${LABEL_X}" y="24" class="head">nestjs-zk-lock vs raw node-zookeeper-client vs Kazoo 2.8 vs Curator 5</text>`,
    `<text x="${LABEL_X}" y="42" class="sub">${escapeXml(subtitle)}</text>`,
    ...out,
    '</svg>',
    '',
  ].join('\n');
}
