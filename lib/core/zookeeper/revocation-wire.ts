/**
 * Curator's revocation on the wire: `Revoker.attemptRevoke` writes these ten ASCII bytes
 * into a holder's node (`setData`, any version), and a holder that made its lock revocable
 * watches its own node's data for them (`REVOKE_REQUEST`). The same bytes make our requests reach Curator
 * holders, and Curator's reach ours.
 */
import { REVOKE_REQUEST } from '../port/lock-node.js';

const REVOKE_BYTES = Buffer.from(REVOKE_REQUEST, 'ascii');

/** The node data that asks its holder to give the lock up. */
export function revokeRequestData(): Buffer {
  return Buffer.from(REVOKE_BYTES);
}

/** Whether a lock node's data is a revocation request (exactly the bytes, as Curator compares them). */
export function isRevokeRequest(data: Buffer | null | undefined): boolean {
  return data != null && data.equals(REVOKE_BYTES);
}
