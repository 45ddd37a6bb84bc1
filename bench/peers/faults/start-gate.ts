/**
 * At most `slots` starts at a time, the rest waiting their turn in order: the locks of a
 * fault start their workers side by side, and a dozen Node processes loading TypeScript
 * (and Nest) at once on a small, busy machine can take longer than a worker may to get
 * ready.
 */
export type StartGate = <T>(start: () => Promise<T>) => Promise<T>;

/** A gate with `slots` slots (see `StartGate`). */
export function startGate(slots: number): StartGate {
  let free = Math.max(1, slots);
  const waiting: Array<() => void> = [];
  return async <T>(start: () => Promise<T>): Promise<T> => {
    if (free > 0) free--;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await start();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else free++;
    }
  };
}
