import { ZkOperationError } from '../errors/zk-operation.error.js';

/** Whether `error` is a ZooKeeper request failure with ZooKeeper's code `zkCode`. */
export function isZkCode(error: unknown, zkCode: string): boolean {
  return error instanceof ZkOperationError && error.zkCode === zkCode;
}
