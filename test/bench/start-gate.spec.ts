import { setTimeout as sleep } from 'node:timers/promises';

import { startGate } from '../../bench/peers/faults/start-gate';

describe('the fault trials start gate (startGate)', () => {
  it('lets at most its slots run at once, the rest in order, also past a failure', async () => {
    const gate = startGate(2);
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const start = (n: number) => async (): Promise<number> => {
      running++;
      most = Math.max(most, running);
      await sleep(20);
      running--;
      order.push(n);
      if (n === 1) throw new Error('a start that failed');
      return n;
    };
    const outcomes = await Promise.allSettled([1, 2, 3, 4, 5].map((n) => gate(start(n))));
    expect(most).toBe(2);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
    expect(order.slice(2)).toEqual([3, 4, 5]);
    // Its slots came back: two more run side by side.
    running = most = 0;
    await Promise.all([gate(start(6)), gate(start(7))]);
    expect(most).toBe(2);
  });
});
