/**
 * `npm run bench`: this library side by side with the raw node-zookeeper-client loop,
 * Kazoo 2.8 and Curator 5, on a ZooKeeper it starts itself; then, in a full run or with
 * --ensemble, scenarios 1 and 2 again on a 3-server ensemble. See options.ts for the flags.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

import { ALL_SCENARIOS, parseBenchArgs, USAGE } from './options.js';
import type { BenchResults } from './results.js';
import { runBench } from './runner.js';
import { consoleReport } from './report/tables.js';
import { writeReports } from './report/write.js';

const ROOT = join(__dirname, '..');

async function main(): Promise<void> {
  const options = parseBenchArgs(process.argv.slice(2));
  if (options.help) {
    console.log(USAGE);
    return;
  }
  const docsDir = join(ROOT, 'docs', 'bench');
  if (options.render) {
    const saved = JSON.parse(readFileSync(options.render, 'utf8')) as BenchResults;
    console.log(
      `written: ${writeReports(saved, { docsDir })
        .map((p) => relative(ROOT, p))
        .join(', ')}`,
    );
    return;
  }
  const log = (line: string): void => console.error(line);
  // The ensemble pass starts its own servers and workers once the standalone pass has stopped its own.
  const standalone = options.ensemble === 'only' ? undefined : await runBench({ ...options, log });
  if (options.ensemble !== 'no') log('ensemble pass: scenarios 1 and 2 on a 3-server loopback ensemble');
  const ensemble = options.ensemble === 'no' ? undefined : await runBench({ ...options, log }, { ensemble: true });
  const results = standalone ? { ...standalone, ensemble } : ensemble!;
  console.log(`\n${consoleReport(results)}\n`);
  // The committed copy (docs/bench) only from full runs on the benchmark's own server.
  const full =
    !options.quick &&
    options.scenarios.length === ALL_SCENARIOS.length &&
    !results.meta.server.external &&
    standalone !== undefined;
  const written = writeReports(results, {
    resultsDir: join(ROOT, 'bench-results'),
    docsDir: full ? docsDir : undefined,
  });
  console.log(`written: ${written.map((p) => relative(ROOT, p)).join(', ')}`);
  if (!full)
    console.log(
      'docs/bench not updated: only a full run (all scenarios, not --quick, own server) writes the committed copy',
    );
  if (results.problems.length || results.ensemble?.problems.length) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
