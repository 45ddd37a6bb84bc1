/**
 * Collects Node's timer warnings (`TimeoutOverflowWarning`: a delay past 2^31 - 1 ms, which
 * Node cuts to 1 ms; `TimeoutNegativeWarning`) for as long as it is started. Node emits
 * them on a later tick, so `stop()` lets one pass first.
 */
export class TimerWarnings {
  private readonly seen: string[] = [];
  private readonly onWarning = (warning: Error): void => {
    if (warning.name.startsWith('Timeout')) this.seen.push(`${warning.name}: ${warning.message}`);
  };

  start(): this {
    process.on('warning', this.onWarning);
    return this;
  }

  /** Stops collecting; the warnings seen. */
  async stop(): Promise<string[]> {
    await new Promise((resolve) => setImmediate(resolve));
    process.off('warning', this.onWarning);
    return this.seen.splice(0);
  }
}
