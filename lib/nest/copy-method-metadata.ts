/**
 * Copies the Reflect metadata that other decorators stored on a method (`@Get`, guards,
 * pipes, Swagger…) onto its wrapper, and keeps the method's name, so that whichever order
 * the decorators are written in, the wrapper looks like the method to Nest.
 */
export function copyMethodMetadata(from: Function, to: Function): void {
  Object.defineProperty(to, 'name', { value: from.name, configurable: true });
  if (typeof Reflect.getOwnMetadataKeys !== 'function') return; // reflect-metadata not loaded
  for (const key of Reflect.getOwnMetadataKeys(from)) {
    Reflect.defineMetadata(key, Reflect.getOwnMetadata(key, from), to);
  }
}
