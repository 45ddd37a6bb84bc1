import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { BenchResults } from '../bench.results.js';
import { updateBenchmarksPage } from './benchmarks-page.section.js';
import { svgChart } from './svg-chart.js';
import { markdownReport } from './table.report.js';

export interface ReportPlaces {
  /** Every run: `<timestamp>.json` and `latest.json` (git-ignored). */
  readonly resultsDir: string;
  /** Full runs only: the committed copy the README includes; undefined to skip. */
  readonly docsDir?: string;
}

/** The committed files' base name: `latest` for forceSync=yes runs, `latest-no-sync` for --no-sync. */
export function docsBaseName(results: BenchResults): string {
  return results.meta.server.forceSync === false ? 'latest-no-sync' : 'latest';
}

/** Writes the JSON results, and when asked the markdown table and SVG chart; returns the paths. */
export function writeReports(results: BenchResults, places: ReportPlaces): string[] {
  const json = JSON.stringify(results, null, 2) + '\n';
  const written: string[] = [];
  const write = (path: string, text: string): void => {
    writeFileSync(path, text);
    written.push(path);
  };
  mkdirSync(places.resultsDir, { recursive: true });
  const stamp = results.meta.startedAt.replace(/[:.]/g, '-');
  write(join(places.resultsDir, `${stamp}.json`), json);
  write(join(places.resultsDir, 'latest.json'), json);
  if (places.docsDir) {
    mkdirSync(places.docsDir, { recursive: true });
    const base = docsBaseName(results);
    write(join(places.docsDir, `${base}.json`), json);
    write(join(places.docsDir, `${base}.svg`), svgChart(results));
    write(join(places.docsDir, `${base}.md`), markdownReport(results, `${base}.svg`));
    const page = updateBenchmarksPage(join(places.docsDir, '..', '..'), places.docsDir);
    if (page) written.push(page);
  }
  return written;
}
