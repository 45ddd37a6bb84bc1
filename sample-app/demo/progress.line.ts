import type { LoadProgress } from './reservation.load.js';

/**
 * Shows a load's progress on stderr: one line redrawn in place (at most every 50 ms) on a
 * terminal, a plain line at each quarter otherwise (CI logs).
 */
export function progressLine(label: string, total: number): { update(progress: LoadProgress): void; end(): void } {
  const tty = Boolean(process.stderr.isTTY);
  const started = performance.now();
  let drawnAt = -Infinity;
  let quarter = 0;
  let last = '';
  return {
    update({ done, inFlight, failed }) {
      const now = performance.now();
      last = `${label}: ${done}/${total} answered, ${inFlight} in flight, ${failed} not 201, ${((now - started) / 1000).toFixed(1)} s`;
      if (tty && now - drawnAt >= 50) {
        drawnAt = now;
        process.stderr.write(`\r\x1b[K${last}`);
      } else if (!tty && done >= ((quarter + 1) * total) / 4) {
        quarter = Math.floor((done * 4) / total);
        process.stderr.write(`${last}\n`);
      }
    },
    end() {
      if (tty) process.stderr.write(`\r\x1b[K${last}\n`);
    },
  };
}
