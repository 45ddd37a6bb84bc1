/** Metadata keys of this library's method decorators (a method wrapped by one carries its key). */
export const WITH_LOCK_METADATA = Symbol.for('nestjs-zk-lock.with-lock');
export const WHEN_LEADER_METADATA = Symbol.for('nestjs-zk-lock.when-leader');
export const WITH_LEASE_METADATA = Symbol.for('nestjs-zk-lock.with-lease');

const KEYS = [WITH_LOCK_METADATA, WHEN_LEADER_METADATA, WITH_LEASE_METADATA];

/** Whether `type` has a method (own or inherited, instance or static) wrapped by one of this library's decorators. */
export function hasDecoratedMethod(type: Function): boolean {
  return hasIn(type.prototype) || hasIn(type);
}

function hasIn(start: object | null | undefined): boolean {
  for (
    let proto = start;
    proto && proto !== Object.prototype && proto !== Function.prototype;
    proto = Object.getPrototypeOf(proto)
  ) {
    for (const key of Object.getOwnPropertyNames(proto)) {
      const value = Object.getOwnPropertyDescriptor(proto, key)?.value;
      if (typeof value === 'function' && KEYS.some((meta) => Reflect.hasOwnMetadata?.(meta, value))) return true;
    }
  }
  return false;
}
