/**
 * A one-shot "stop" for one operation, cheaper than an AbortController on the hot path:
 * racing a promise against it costs no event listener. An AbortSignal is made only for
 * the rare caller that needs one.
 */
export class Stop {
  private reasonValue: unknown;
  private stoppedFlag = false;
  private reject!: (reason: unknown) => void;
  private readonly stopped = new Promise<never>((_, reject) => (this.reject = reject));
  private controller: AbortController | undefined;

  constructor() {
    this.stopped.catch(() => undefined);
  }

  get isStopped(): boolean {
    return this.stoppedFlag;
  }

  get reason(): unknown {
    return this.reasonValue;
  }

  stop(reason: unknown): void {
    if (this.stoppedFlag) return;
    this.stoppedFlag = true;
    this.reasonValue = reason;
    this.reject(reason);
    this.controller?.abort(reason);
  }

  throwIfStopped(): void {
    if (this.stoppedFlag) throw this.reasonValue;
  }

  /** `work`, unless the stop comes first: then its reason. */
  race<T>(work: Promise<T>): Promise<T> {
    if (this.stoppedFlag) {
      work.catch(() => undefined);
      return Promise.reject(this.reasonValue);
    }
    return Promise.race([work, this.stopped]);
  }

  /** The stop as an AbortSignal, made on first use. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.stoppedFlag) this.controller.abort(this.reasonValue);
    }
    return this.controller.signal;
  }
}
