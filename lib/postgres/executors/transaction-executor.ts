import { InvalidOptionError } from '../../core/errors/errors.js';
import type { FenceExecutor } from '../fence-executor.js';

/** How an adapter sends one statement through its ORM's transaction. */
export type SendStatement = (text: string, values: unknown[]) => Promise<{ rows: object[] }>;

/**
 * A `FenceExecutor` over an ORM's transaction. Refused with `InvalidOptionError` (naming
 * `option` and what was `expected`) unless `open()` says the transaction runs, when made
 * and again before each statement: a check outside a transaction would lock nothing and
 * commit at once, so it is never sent. `open` may meet anything the user passed: it is
 * read as false if it throws.
 */
export function transactionExecutor(
  option: string,
  given: unknown,
  expected: string,
  open: () => boolean,
  send: SendStatement,
): FenceExecutor {
  const assertOpen = (): void => {
    let running = false;
    try {
      running = open();
    } catch {
      // not the ORM's transaction object: refused below
    }
    if (!running) throw new InvalidOptionError(option, given, expected);
  };
  assertOpen();
  return {
    async query(text, values = []) {
      assertOpen();
      return send(text, values);
    },
  };
}
