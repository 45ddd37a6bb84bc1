import { runLoad, type Answer, type LoadPlan } from './concurrent.load.js';
import { progressLine } from './progress.line.js';
import type { SampleAppProcess } from './sample-app.process.js';

/** What every scenario of the demo runs against. */
export interface DemoContext {
  readonly apps: readonly SampleAppProcess[];
  /** `--short`: the quick run for CI. */
  readonly short: boolean;
  /** Requests in flight at once, over all the instances. */
  readonly concurrency: number;
  readonly signal: AbortSignal;
}

/** One scenario's part of the summary. */
export interface ScenarioReport {
  /** What ran, the line above the table. */
  readonly title: string;
  readonly table: string;
  /** One verdict a line, below the table. */
  readonly lines: readonly string[];
  /** Whether the guarded endpoint did what it promises (the control may fail: that is its point). */
  readonly ok: boolean;
}

/** "12 at a time", or "all at once" when there are no more requests than that. */
export function pace(context: DemoContext, requests: number): string {
  return requests <= context.concurrency ? 'all at once' : `${context.concurrency} at a time`;
}

/** Width of the progress lines' labels, so that they line up. */
const LABEL_WIDTH = 18;

/** Runs one load over every instance, round-robin, with a progress line on stderr. */
export async function loadAll(
  context: DemoContext,
  label: string,
  requests: number,
  request: LoadPlan['request'],
): Promise<Answer[]> {
  const progress = progressLine(label.padEnd(LABEL_WIDTH), requests);
  const answers = await runLoad({
    urls: context.apps.map((app) => app.url),
    request,
    requests,
    concurrency: context.concurrency,
    signal: context.signal,
    onProgress: progress.update,
  });
  progress.end();
  if (context.signal.aborted) throw new Error('interrupted');
  return answers;
}
