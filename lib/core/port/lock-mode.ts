/** `write` is exclusive (a plain mutex); `read` is shared with other readers. */
export type LockMode = 'read' | 'write';

export const LOCK_MODES: readonly LockMode[] = ['read', 'write'];
