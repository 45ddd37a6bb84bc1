/** Injection token of the lock backend (`LockBackend`) the module connects at start-up. */
export const ZK_LOCK_BACKEND = Symbol.for('nestjs-zk-lock.backend');
/** Injection token of the module's options after validation and defaults. */
export const ZK_LOCK_RESOLVED_OPTIONS = Symbol.for('nestjs-zk-lock.resolved-options');
