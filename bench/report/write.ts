import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { fenceMarkdown, type FenceCostResults } from '../fence/fence-cost.js';
import type { BenchResults, LatencyResults } from '../results.js';
import { svgChart } from './chart.js';
import { capacityMarkdownReport, latencyMarkdownReport, markdownReport } from './tables.js';

export interface ReportPlaces {
  /** `<timestamp>.json` and `latest.json` (git-ignored); undefined to skip. */
  readonly resultsDir?: string;
  /** Full runs only: the committed copy (docs/bench) and the page docs/benchmarks.md; undefined to skip. */
  readonly docsDir?: string;
}

/** The committed files' base name: `latest` for forceSync=yes runs, `latest-no-sync` for --no-sync. */
export function docsBaseName(results: BenchResults): string {
  return results.meta.server.forceSync === false ? 'latest-no-sync' : 'latest';
}

/** Writes the JSON results, and when asked the markdown report, the SVG chart and the page; returns the paths. */
export function writeReports(results: BenchResults, places: ReportPlaces): string[] {
  const base = docsBaseName(results);
  return writeFiles(results, results.meta.startedAt, 'latest', places, () => [
    [`${base}.json`, json(results)],
    [`${base}.svg`, svgChart(results)],
    [`${base}.md`, markdownReport(results, `${base}.svg`)],
  ]);
}

/** The same for the latency passes: `latest-latency.json` (and .md), apart from the loopback run's files. */
export function writeLatencyReports(results: LatencyResults, places: ReportPlaces): string[] {
  const startedAt = results.passes[0]?.meta.startedAt ?? new Date().toISOString();
  return writeFiles(results, startedAt, 'latest-latency', places, () => [
    ['latest-latency.json', json(results)],
    ['latest-latency.md', latencyMarkdownReport(results)],
  ]);
}

/** The same for the capacity pass: `latest-capacity.json` (and .md). */
export function writeCapacityReports(results: BenchResults, places: ReportPlaces): string[] {
  return writeFiles(results, results.meta.startedAt, 'latest-capacity', places, () => [
    ['latest-capacity.json', json(results)],
    ['latest-capacity.md', capacityMarkdownReport(results)],
  ]);
}

/** The same for the fence's cost: `latest-fence.json` (and .md). */
export function writeFenceReports(results: FenceCostResults, places: ReportPlaces): string[] {
  return writeFiles(results, results.meta.startedAt, 'latest-fence', places, () => [
    ['latest-fence.json', json(results)],
    ['latest-fence.md', fenceMarkdown(results)],
  ]);
}

/**
 * A pass with a page of its own (partitions, peers): `<name>-<timestamp>.json` and
 * `latest-<name>.json` in `resultsDir`; `latest-<name>.{json,md}` in `docsDir`. Not on
 * docs/benchmarks.md's list, which only the main passes' files update.
 */
export function writePassReports(
  name: string,
  startedAt: string,
  results: unknown,
  markdown: () => string,
  places: ReportPlaces,
): string[] {
  return writeResults(results, startedAt, `latest-${name}`, places, () => [
    [`latest-${name}.json`, json(results)],
    [`latest-${name}.md`, markdown()],
  ]);
}

const json = (results: unknown): string => JSON.stringify(results, null, 2) + '\n';

/** The JSON results in `resultsDir` (`<timestamp><suffix>.json` and `<latest>.json`), and `docs()`'s files in `docsDir`. */
function writeResults(
  results: unknown,
  startedAt: string,
  latest: string,
  places: ReportPlaces,
  docs: () => Array<[file: string, text: string]>,
): string[] {
  const written: string[] = [];
  const write = (dir: string, file: string, text: string): void => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, file), text);
    written.push(join(dir, file));
  };
  if (places.resultsDir) {
    const suffix = latest === 'latest' ? '' : latest.slice('latest'.length);
    write(places.resultsDir, `${startedAt.replace(/[:.]/g, '-')}${suffix}.json`, json(results));
    write(places.resultsDir, `${latest}.json`, json(results));
  }
  if (places.docsDir) for (const [file, text] of docs()) write(places.docsDir, file, text);
  return written;
}

/** writeResults, then docs/benchmarks.md's list of the committed files (when `docsDir` is given). */
function writeFiles(
  results: BenchResults | LatencyResults | FenceCostResults,
  startedAt: string,
  latest: string,
  places: ReportPlaces,
  docs: () => Array<[file: string, text: string]>,
): string[] {
  const written = writeResults(results, startedAt, latest, places, docs);
  if (places.docsDir) {
    const page = updateBenchmarksPage(join(places.docsDir, '..', 'benchmarks.md'), places.docsDir);
    if (page) written.push(page);
  }
  return written;
}

const START = '<!-- bench:start -->';
const END = '<!-- bench:end -->';
const CAPACITY_START = '<!-- capacity:start -->';
const CAPACITY_END = '<!-- capacity:end -->';
const FENCE_START = '<!-- fence:start -->';
const FENCE_END = '<!-- fence:end -->';

/** The "## Targets" table of a report, if it has one. */
function targetsOf(markdown: string): string {
  return /^## Targets\n\n((?:\|.*\n?)+)/m.exec(markdown)?.[1].trim() ?? '';
}

/** A report's body without its title and "Generated by" line, its headings one level down (`nest`) or as they are. */
function bodyOf(file: string, nest: boolean): string {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => !line.startsWith('# ') && !line.startsWith('Generated by'))
    .map((line) => (nest && line.startsWith('## ') ? `#${line}` : line))
    .join('\n')
    .trim();
}

/** `page` with what lies between `start` and `end` replaced by `lines`; unchanged without both markers. */
function between(page: string, start: string, end: string, lines: readonly string[]): string {
  const [from, to] = [page.indexOf(start), page.indexOf(end)];
  if (from < 0 || to < from) return page;
  return page.slice(0, from) + [start, ...lines, end].join('\n') + page.slice(to + end.length);
}

/**
 * Rewrites the parts of the page between its markers from the committed reports in
 * `docsDir` (the forceSync=yes report, the --no-sync run's targets and the latency passes
 * between the bench markers; the capacity pass between its own), so every figure on the
 * page is the benchmark's own output. The text around the markers is written by hand.
 */
function updateBenchmarksPage(pagePath: string, docsDir: string): string | undefined {
  if (!existsSync(pagePath)) return undefined;
  const original = readFileSync(pagePath, 'utf8');
  let page = original;
  const synced = join(docsDir, 'latest.md');
  if (existsSync(synced)) {
    const report = bodyOf(synced, false).replaceAll('](latest.svg)', '](bench/latest.svg)');
    const noSync = join(docsDir, 'latest-no-sync.md');
    const noSyncTargets = existsSync(noSync) ? targetsOf(readFileSync(noSync, 'utf8')) : '';
    const latencyFile = join(docsDir, 'latest-latency.md');
    // Its headings one level down, under the page's own heading for the latency passes.
    const latency = existsSync(latencyFile) ? bodyOf(latencyFile, true) : '';
    page = between(page, START, END, [
      'Generated by `npm run bench` (forceSync=yes, as production runs) from `docs/bench/latest.md`; do not edit by hand.',
      'Reproduce with `npm run bench`; the client-bound run is `npm run bench -- --no-sync` ([bench/latest-no-sync.md](bench/latest-no-sync.md)).',
      '',
      report,
      ...(noSyncTargets ? ['', '## Targets on a forceSync=no server (`--no-sync`)', '', noSyncTargets] : []),
      ...(latency
        ? [
            '',
            '## On a network with latency (`--latency`)',
            '',
            'Generated by the latency passes of `npm run bench` from `docs/bench/latest-latency.md`: scenarios 1, 2, 7 and 8 with every implementation reaching the server through one delay proxy, at each one-way delay (its own run; see its date).',
            '',
            latency,
          ]
        : []),
    ]);
  }
  const capacityFile = join(docsDir, 'latest-capacity.md');
  if (existsSync(capacityFile))
    page = between(page, CAPACITY_START, CAPACITY_END, [
      'Generated by the capacity pass of `npm run bench` from `docs/bench/latest-capacity.md` (its own run; see its date); do not edit by hand. Reproduce it alone with `npm run bench -- --capacity-only`.',
      '',
      bodyOf(capacityFile, true),
    ]);
  const fenceFile = join(docsDir, 'latest-fence.md');
  if (existsSync(fenceFile))
    page = between(page, FENCE_START, FENCE_END, [
      'Generated by `npm run bench` from `docs/bench/latest-fence.md` (its own run; see its date); do not edit by hand.',
      '',
      bodyOf(fenceFile, true),
    ]);
  if (page === original) return undefined;
  writeFileSync(pagePath, page);
  return pagePath;
}
