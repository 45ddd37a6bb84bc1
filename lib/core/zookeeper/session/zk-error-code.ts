import { ZkOperationError } from '../../errors/errors.js';

/** Whether `error` is a ZooKeeper request failure with ZooKeeper's code `zkCode`. */
export function isZkCode(error: unknown, zkCode: string): boolean {
  return error instanceof ZkOperationError && error.zkCode === zkCode;
}

/** The name of a node-zookeeper-client error's ZooKeeper code (`NO_NODE`, …), or its message. */
export function zkErrorName(error: Error): string {
  const named = error as Error & { getName?: () => string };
  return typeof named.getName === 'function' ? named.getName() : error.message;
}
