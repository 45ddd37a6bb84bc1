import { requestJson } from './json-http.client.js';

export interface LoadPlan {
  /** Instance base URLs; request i goes to urls[i % urls.length]. */
  readonly urls: readonly string[];
  readonly path: string;
  readonly requests: number;
  readonly concurrency: number;
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: LoadProgress) => void;
}

export interface LoadProgress {
  readonly done: number;
  readonly inFlight: number;
  readonly failed: number;
}

export interface Answer {
  /** HTTP status, or 0 when the request got no answer (`error` says why). */
  readonly status: number;
  readonly body?: { timing?: { waitMs: number; holdMs: number }; fencingToken?: string | null };
  readonly error?: string;
}

/** Sends `requests` reservations, `concurrency` at a time, round-robin over the instances. */
export async function runLoad(plan: LoadPlan): Promise<Answer[]> {
  const answers: Answer[] = [];
  let next = 0;
  let inFlight = 0;
  const report = (): void => plan.onProgress?.({ done: answers.length, inFlight, failed: answers.filter((a) => a.status !== 201).length });
  const worker = async (): Promise<void> => {
    while (next < plan.requests && !plan.signal?.aborted) {
      const i = next++;
      inFlight++;
      report();
      const url = `${plan.urls[i % plan.urls.length]}${plan.path}`;
      answers.push(await requestJson<Answer['body']>('POST', url, { customer: `customer-${i + 1}` }).catch((error: Error) => ({ status: 0, error: error.message })));
      inFlight--;
    }
  };
  await Promise.all(Array.from({ length: plan.concurrency }, worker));
  report();
  return answers;
}
