/** The parts of Nest's `Module` (from @nestjs/core's injector, stable across 11 and 12) this file reads. */
export interface NestModuleLike {
  readonly id: string;
  readonly metatype: unknown;
  readonly providers: ReadonlyMap<unknown, { readonly instance: unknown }>;
  readonly imports: ReadonlySet<NestModuleLike | undefined>;
  readonly exports: ReadonlySet<unknown>;
}

/**
 * The instance Nest injects for `token` into a provider of `host`: `host`'s own provider,
 * else the first imported module that exports it, following only the imports a module
 * re-exports (global modules are among every module's imports). This is Nest's own lookup,
 * so that with `ZkLockModule.forRoot` in two feature modules each provider uses the
 * `LockService` it would get injected.
 */
export function instanceSeenBy(host: NestModuleLike, token: unknown): unknown {
  if (host.providers.has(token)) return host.providers.get(token)?.instance;
  return lookUpImports(host, token, new Set([host.id]), false);
}

function lookUpImports(module: NestModuleLike, token: unknown, seen: Set<string>, traversing: boolean): unknown {
  for (const child of module.imports) {
    if (!child || seen.has(child.id)) continue;
    if (traversing && !module.exports.has(child.metatype)) continue;
    seen.add(child.id);
    if (child.providers.has(token) && child.exports.has(token)) return child.providers.get(token)?.instance;
    const found = lookUpImports(child, token, seen, true);
    if (found !== undefined) return found;
  }
  return undefined;
}
