/**
 * `npm run soak`: lock cycles with contention and forced reconnects against a ZooKeeper of
 * its own, failing (exit 1) when anything grows with the cycles or is left behind. See
 * soak.options.ts for the flags, soak.driver.ts for the run, growth.limits.ts for the limits.
 */
import { GROWTH_RULES } from './growth.limits.js';
import { runSoak } from './soak.driver.js';
import { parseSoakArgs, USAGE, type SoakOptions } from './soak.options.js';
import { checkpointTable, verdictTable } from './table.report.js';

async function main(): Promise<void> {
  let options: SoakOptions;
  try {
    options = parseSoakArgs(process.argv.slice(2));
  } catch (error) {
    console.error((error as Error).message); // a usage error: no stack
    process.exitCode = 2;
    return;
  }
  if (options.help) return void console.log(USAGE);
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  log(
    `soak: ${options.cycles} cycles, ${options.clients} clients × ${options.workersPerClient} workers, a connection dropped every ${options.reconnectEvery} cycles, ${options.checkpoints} checkpoints (${options.warmupCheckpoints} warm-up), seed ${options.seed}`,
  );
  const result = await runSoak(options, log);
  const { stats } = result;
  const out = [
    '',
    checkpointTable(result.checkpoints, options.warmupCheckpoints + 1),
    '',
    verdictTable(result.verdicts, GROWTH_RULES),
    '',
    `${result.cycles} cycles in ${result.seconds.toFixed(1)} s (${(result.cycles / result.seconds).toFixed(0)}/s); ${result.drops} connections dropped, ${result.reconnects} reconnects, ${result.sessionsLost} sessions lost`,
    `granted ${stats.granted}, busy ${stats.busy}, waited ${stats.waited}, timed out ${stats.timedOut}, aborted ${stats.aborted}, unavailable ${stats.unavailable}, exclusion violations ${stats.exclusionViolations}, other errors ${stats.errorCount}`,
    `ops: ${Object.entries(stats.byOp)
      .map(([op, n]) => `${op} ${n}`)
      .join(', ')}`,
    `after close: ${result.end.nodesLeft.length} znodes left, ${result.end.watchesLeft} server watches, ${result.end.sessionsLeft} sessions`,
    result.failures.length
      ? `FAIL:\n${result.failures.map((f) => `  - ${f}`).join('\n')}`
      : 'PASS: nothing grows, nothing left behind',
  ];
  console.log(out.join('\n'));
  if (options.json) console.log(JSON.stringify(result));
  if (result.failures.length) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exitCode = 1;
});
