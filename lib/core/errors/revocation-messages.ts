/**
 * The messages of revocation, written once here in the style of `../errors/lock.messages.ts`:
 * what happened, to which lock, and what to do.
 */
export const revocationMessages = {
  requested: (name: string): string =>
    `Lock "${name}" is wanted elsewhere: another client asked its holders to give it up (requestRevocation("${name}"), or Curator's Revoker wrote __REVOKE__ into this holder's node). The lock is still held: finish or stop the work at a safe point, then release() it.`,
} as const;
