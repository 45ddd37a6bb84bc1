/**
 * The fault trials' tables for the page: per fault case, a row per lock with what the
 * checker counted over its trials (see ./overlap-checker.ts for what each figure means).
 */
import type { FaultResults, FaultRow } from './fault-pass.js';
import { caseTitle, FAULT_IDS } from './fault-scenarios.js';

const HEADER =
  '| Lock | Trials | Overlapped | Overlap median / max | Told first | Stale writes landed, fenced | Stale writes landed, unfenced |';
const RULE = '|---|--:|--:|--:|--:|--:|--:|';

/** ms with one decimal below 10, whole above. */
function ms(value: number): string {
  return value < 10 ? value.toFixed(1) : value.toFixed(0);
}

function rowLine(row: FaultRow): string {
  if (row.notApplicable) return `| ${row.peer} | ${row.notApplicable} | | | | | |`;
  const { summary: s } = row;
  const trials = [
    String(s.trials),
    row.failedTrials > 0 ? ` (${row.failedTrials} failed)` : '',
    s.bFailed > 0 ? ` (B's call failed in ${s.bFailed})` : '',
    row.pausedInsideWrite > 0 ? ` (paused inside a write in ${row.pausedInsideWrite})` : '',
    row.error ? ` (stopped: ${row.error.replace(/\|/g, '/').slice(0, 120)})` : '',
  ].join('');
  const overlap = s.overlapMedianMs === null ? '—' : `${ms(s.overlapMedianMs)} / ${ms(s.overlapMaxMs!)} ms`;
  const told = s.takenOver === 0 ? '—' : `${s.toldFirst} of ${s.takenOver}`;
  const fenced = row.fenced ? `${s.staleWrites.fenced.landed} (${s.staleWrites.fenced.refused} refused)` : '—';
  const unfencedTrials = s.trialsWithStaleLanded.unfenced;
  const unfenced = `${s.staleWrites.unfenced.landed}${unfencedTrials > 0 ? ` in ${unfencedTrials} trials` : ''}`;
  return `| ${row.peer} | ${trials} | ${s.overlapped} | ${overlap} | ${told} | ${fenced} | ${unfenced} |`;
}

/** The tables, a legend, and the notes of locks the fault struck differently. */
export function faultMarkdown(results: FaultResults): string {
  const { settings } = results;
  const lines = [
    `Every lock with the same TTL (ours: its session timeout) of ${results.ttlMs} ms, ${results.reps} trial(s) per row. ` +
      `A trial: holder A takes a fresh key and works ${settings.aWorkMs} ms, writing every ${settings.writeEveryMs} ms ` +
      `to a fenced PostgreSQL row (PgFence, where the lock gives a token) and to an unfenced one, asking the lock ` +
      `before each write whether it still holds; holder B asks for the key when A is granted; the fault strikes ` +
      `${settings.strikeAfterMs} ms after A's grant (a pause or a cut lasts ${settings.faultMs} ms).`,
    '',
    "*Overlapped*: trials in which B was granted before A's hold ended (A told, stopped, or done). A holder " +
      'paused by SIGSTOP that woke to the news (told before any write) held nothing after it was stopped. ' +
      '*Told first*: of the trials in which the lock went to B while A still had it, or after A was told it had lost it, ' +
      "those in which A was told at or before B's grant (— : none; B waited for A's own release). *B's call failed*: B gave up, or its library failed its call, " +
      "before any grant (no overlap then says nothing). *Stale writes*: A's writes that returned after B's grant, summed over the trials; " +
      '— where the lock gives no token.',
  ];
  for (const fault of FAULT_IDS) {
    const rows = results.rows.filter((row) => row.fault === fault);
    const variants = [...new Set(rows.map((row) => row.variant))];
    for (const variant of variants) {
      const caseRows = rows.filter((row) => row.variant === variant);
      lines.push('', `#### ${caseTitle({ fault, ...(variant ? { variant } : {}) })}`, '', HEADER, RULE);
      lines.push(...caseRows.map(rowLine));
      const notes = caseRows.filter((row) => row.note && !row.notApplicable);
      if (notes.length > 0) lines.push('', ...notes.map((row) => `${row.peer}: ${row.note}.`));
    }
  }
  return lines.join('\n');
}
