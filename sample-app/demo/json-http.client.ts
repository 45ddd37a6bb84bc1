/** One HTTP answer: its status and parsed JSON body, or the error that prevented it. */
export interface HttpResult<T = unknown> {
  readonly status: number;
  readonly body: T;
}

/** A JSON request with a time limit; rejects on network errors, resolves on any status. */
export async function requestJson<T = unknown>(
  method: string,
  url: string,
  body?: unknown,
  timeoutMs = 30_000,
): Promise<HttpResult<T>> {
  const response = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/** Like `requestJson`, but anything other than `expected` is an error naming the answer. */
export async function expectJson<T = unknown>(
  method: string,
  url: string,
  expected: number,
  body?: unknown,
): Promise<T> {
  const result = await requestJson<T>(method, url, body);
  if (result.status !== expected)
    throw new Error(`${method} ${url} answered ${result.status}, not ${expected}: ${JSON.stringify(result.body)}`);
  return result.body;
}
