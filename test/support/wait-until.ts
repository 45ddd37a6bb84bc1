import { waitFor } from './wait-for';

/** `waitFor` for a yes/no condition: resolves once `check` is true, fails naming `what`. */
export async function waitUntil(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  await waitFor(check, { what, timeoutMs });
}
