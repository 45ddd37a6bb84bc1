import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/**
 * The rules of the source tree (docs/internals.md, "Source map"), read from the imports
 * themselves: a layer that reaches the wrong way, or a cycle, fails here before a reader
 * trips on it.
 */

const LIB = resolve(__dirname);

interface SourceFile {
  /** Path under lib/, with forward slashes. */
  readonly path: string;
  /** Files under lib/ it imports (type-only imports included), and the packages it imports. */
  readonly files: string[];
  readonly packages: string[];
}

function sources(dir = LIB): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

function read(path: string): SourceFile {
  const { importedFiles } = ts.preProcessFile(readFileSync(path, 'utf8'), true, true);
  const files: string[] = [];
  const packages: string[] = [];
  for (const { fileName } of importedFiles) {
    if (!fileName.startsWith('.')) {
      packages.push(fileName);
      continue;
    }
    const target = resolve(dirname(path), fileName.replace(/\.js$/, ''));
    files.push(relative(LIB, target) + '.ts');
  }
  return { path: relative(LIB, path), files, packages };
}

const tree = sources().map(read);
const byPath = new Map(tree.map((file) => [file.path, file]));

/** The import cycles among `tree`, each as the files around it (Tarjan's strongly connected components). */
function cycles(): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (path: string): void => {
    index.set(path, index.size);
    low.set(path, index.get(path)!);
    stack.push(path);
    for (const next of byPath.get(path)!.files) {
      if (!byPath.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(path, Math.min(low.get(path)!, low.get(next)!));
      } else if (stack.includes(next)) low.set(path, Math.min(low.get(path)!, index.get(next)!));
    }
    if (low.get(path) !== index.get(path)) return;
    const component = stack.splice(stack.indexOf(path));
    if (component.length > 1) found.push(component.sort());
  };
  for (const { path } of tree) if (!index.has(path)) visit(path);
  return found;
}

/** `from → to` for each import of a file under `from` that reaches a file outside `allowed`. */
function importsOutside(from: string, allowed: readonly string[]): string[] {
  return tree
    .filter(({ path }) => path.startsWith(from))
    .flatMap(({ path, files }) =>
      files.filter((to) => !allowed.some((folder) => to.startsWith(folder))).map((to) => `${path} → ${to}`),
    );
}

describe('source layout', () => {
  it('reads the tree (guards the rules below against an empty walk)', () => {
    expect(byPath.has('core/port/lock-backend.ts')).toBe(true);
    expect(byPath.get('core/zookeeper/zk-lock-backend.ts')!.files).toContain('core/port/lock-backend.ts');
  });

  it('has no import cycle between files', () => {
    expect(cycles()).toEqual([]);
  });

  it('keeps errors/ free of imports from the rest', () => {
    expect(importsOutside('core/errors/', ['core/errors/'])).toEqual([]);
  });

  it('keeps the port on errors/ alone', () => {
    expect(importsOutside('core/port/', ['core/port/', 'core/errors/'])).toEqual([]);
  });

  it('keeps the two backends apart, and every layer on the port (never on a backend)', () => {
    const neutral = ['core/port/', 'core/errors/', 'core/util/', 'core/naming/', 'core/diagnostics/'];
    expect(importsOutside('core/memory/', [...neutral, 'core/memory/', 'core/multi/'])).toEqual([]);
    expect(importsOutside('core/zookeeper/', [...neutral, 'core/zookeeper/', 'core/multi/'])).toEqual([]);
    const layers = ['core/multi/', 'core/reentrancy/', 'core/leader/', 'core/run-once/', 'core/membership/'];
    for (const layer of layers) expect(importsOutside(layer, [...neutral, ...layers])).toEqual([]);
  });

  it('keeps Nest out of the core', () => {
    const framework = tree
      .filter(({ path }) => path.startsWith('core/'))
      .flatMap(({ path, packages }) =>
        packages.filter((name) => name.startsWith('@nestjs/') || name === 'rxjs').map((name) => `${path} → ${name}`),
      );
    expect(framework).toEqual([]);
  });

  it('keeps postgres/ framework-free and driver-free: on the core alone, importing neither Nest nor pg; its Nest glue in postgres/nest/ only', () => {
    const core = (path: string): boolean =>
      path.startsWith('postgres/') && !path.startsWith('postgres/nest/') && path !== 'postgres/index.ts';
    const allowed = ['postgres/', 'core/errors/', 'core/port/', 'core/leader/', 'core/reentrancy/'];
    const outside = tree
      .filter(({ path }) => core(path))
      .flatMap(({ path, files }) =>
        files.filter((to) => !allowed.some((f) => to.startsWith(f))).map((to) => `${path} → ${to}`),
      );
    expect(outside).toEqual([]);
    const packages = tree.filter(({ path }) => core(path)).flatMap(({ packages }) => packages);
    expect(packages.filter((name) => !name.startsWith('node:'))).toEqual([]); // Node's own modules only
    // The glue: Nest's common package and the fence, nothing of pg.
    const glue = tree.filter(({ path }) => path.startsWith('postgres/nest/')).flatMap(({ packages }) => packages);
    expect(glue.length).toBeGreaterThan(0);
    expect(glue.filter((name) => name !== '@nestjs/common')).toEqual([]);
  });

  it('names core files in plain kebab-case after their main export (no <subject>.<role>.ts)', () => {
    const odd = tree
      .map(({ path }) => path)
      .filter((path) => path.startsWith('core/') && !/^[a-z0-9]+(-[a-z0-9]+)*\.ts$/.test(basename(path)));
    expect(odd).toEqual([]);
  });

  it('gives Nest files only the roles Nest itself uses', () => {
    const roles = new Set([
      'module',
      'module-definition',
      'service',
      'decorator',
      'interceptor',
      'filter',
      'explorer',
      'listener',
      'options',
      'constants',
      'providers',
      'health-indicator',
    ]);
    const odd = tree
      .map(({ path }) => path)
      .filter((path) => /^(nest|terminus|schedule|postgres\/nest)\//.test(path))
      .filter((path) => {
        const parts = basename(path, '.ts').split('.');
        return parts.length > 2 || (parts.length === 2 && !roles.has(parts[1]));
      });
    expect(odd).toEqual([]);
  });
});
