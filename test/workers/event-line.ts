/**
 * One event of a worker process, as one JSON line on stdout with `Date.now()`: a clock
 * the processes of a test share, so the test can order events across them.
 */
export function report(event: string, fields: Record<string, unknown> = {}): void {
  process.stdout.write(`${JSON.stringify({ t: Date.now(), event, ...fields })}\n`);
}
