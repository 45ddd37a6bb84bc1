import type { LoadProgress } from './concurrent.load.js';

/** On a terminal: the text of each load still running, all redrawn together on one line. */
const running = new Map<symbol, string>();
let drawnAt = -Infinity;

function draw(force: boolean): void {
  const now = performance.now();
  if (!force && now - drawnAt < 50) return;
  drawnAt = now;
  process.stderr.write(`\r\x1b[K${[...running.values()].join('  ·  ')}`);
}

/**
 * Shows a load's progress on stderr: redrawn in place (at most every 50 ms, beside any
 * other load running at the same time) on a terminal, a plain line at each quarter
 * otherwise (CI logs).
 */
export function progressLine(label: string, total: number): { update(progress: LoadProgress): void; end(): void } {
  const tty = Boolean(process.stderr.isTTY);
  const key = Symbol(label);
  const started = performance.now();
  let quarter = 0;
  let last = '';
  return {
    update({ done, inFlight, failed }) {
      last = `${label}: ${done}/${total} answered, ${inFlight} in flight, ${failed} not 201, ${((performance.now() - started) / 1000).toFixed(1)} s`;
      if (tty) {
        running.set(key, last);
        draw(false);
      } else if (done >= ((quarter + 1) * total) / 4) {
        quarter = Math.floor((done * 4) / total);
        process.stderr.write(`${last}\n`);
      }
    },
    end() {
      if (!tty) return;
      running.delete(key);
      process.stderr.write(`\r\x1b[K${last}\n`); // the final count stays on a line of its own
      if (running.size > 0) draw(true);
    },
  };
}
