import type { CallTiming } from '../src/common/call-timing.js';
import { requestJson } from './json-http.client.js';

export interface LoadPlan {
  /** Instance base URLs; request i goes to urls[i % urls.length]. */
  readonly urls: readonly string[];
  /** Request i: the path it POSTs to and its JSON body. */
  readonly request: (i: number) => { readonly path: string; readonly body: unknown };
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
  readonly body?: { timing?: CallTiming; fencingToken?: string | null };
  readonly error?: string;
}

/**
 * Sends `requests` POSTs, `concurrency` at a time, round-robin over the instances.
 * Resolves with the answers in the order of the requests (answer i is request i's).
 */
export async function runLoad(plan: LoadPlan): Promise<Answer[]> {
  const answers: Answer[] = [];
  let next = 0;
  let done = 0;
  let failed = 0;
  let inFlight = 0;
  const report = (): void => plan.onProgress?.({ done, inFlight, failed });
  const worker = async (): Promise<void> => {
    while (next < plan.requests && !plan.signal?.aborted) {
      const i = next++;
      inFlight++;
      report();
      const { path, body } = plan.request(i);
      const url = `${plan.urls[i % plan.urls.length]}${path}`;
      answers[i] = await requestJson<Answer['body']>('POST', url, body).catch((error: Error) => ({
        status: 0,
        error: error.message,
      }));
      inFlight--;
      done++;
      if (answers[i].status !== 201) failed++;
      report();
    }
  };
  await Promise.all(Array.from({ length: plan.concurrency }, worker));
  return answers.filter(Boolean); // an interrupted run leaves holes
}
