import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';

import { packedLibrary } from '../support/fixture-app';

/**
 * What `npm pack` ships: the builds, their types and maps (with their sources inside), the
 * licence, the README and what it links to. Packed from a fresh copy of the repository,
 * without dist/ (`packedLibrary`): the package's `prepack` builds it.
 */
describe('the package tarball', () => {
  let dir: string;
  let files: string[];
  beforeAll(async () => {
    const { tarball } = await packedLibrary();
    dir = mkdtempSync(join(tmpdir(), 'zk-lock-pack-'));
    execFileSync('tar', ['xzf', tarball, '-C', dir]);
    files = execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map((file) => file.replace(/^package\//, ''));
  }, 240_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('holds both builds with their types, the licence and the README', () => {
    for (const file of [
      'package.json',
      'LICENSE',
      'README.md',
      'dist/cjs/index.js',
      'dist/cjs/index.d.ts',
      'dist/cjs/package.json',
      'dist/esm/index.js',
      'dist/esm/index.d.ts',
      'dist/esm/package.json',
      'dist/cjs/terminus/index.js',
      'dist/esm/terminus/index.js',
      'dist/esm/terminus/index.d.ts',
      'dist/cjs/otel/index.js',
      'dist/esm/otel/index.js',
      'dist/cjs/schedule/index.js',
      'dist/esm/schedule/index.js',
      'dist/esm/schedule/index.d.ts',
      'dist/cjs/postgres/index.js',
      'dist/esm/postgres/index.js',
      'dist/esm/postgres/index.d.ts',
    ]) {
      expect(files).toContain(file);
    }
    expect(readFileSync(join(dir, 'package', 'LICENSE'), 'utf8')).toMatch(/^MIT License/);
  });

  it("holds the CLI that package.json's bin names, runnable as a script", () => {
    const { bin } = JSON.parse(readFileSync(join(dir, 'package', 'package.json'), 'utf8')) as {
      bin: Record<string, string>;
    };
    const script = bin['nestjs-zk-lock'].replace(/^\.\//, '');
    expect(files).toContain(script);
    expect(readFileSync(join(dir, 'package', script), 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/);
  });

  it('holds nothing of the repository beyond that: no sources, tests, specs, bench, sample app', () => {
    const stray = files.filter(
      (file) =>
        !/^(dist\/(cjs|esm)\/|docs\/[^/]+\.md$|docs\/bench\/[^/]+\.(md|svg)$|(package\.json|LICENSE|README\.md|CHANGELOG\.md)$)/.test(
          file,
        ) || /\.spec\./.test(file),
    );
    expect(stray).toEqual([]);
  });

  it('ships every file the README links to, and every file its docs pages link to', () => {
    const linksOf = (page: string): string[] => {
      const text = readFileSync(join(dir, 'package', page), 'utf8');
      return [...text.matchAll(/\]\((?!https?:|#)([^)#\s]+)/g)].map((match) =>
        posix.join(posix.dirname(page), match[1]),
      );
    };
    const pages = ['README.md', ...files.filter((file) => /^docs\/[^/]+\.md$/.test(file))];
    expect(pages).toContain('docs/guide.md');
    for (const page of pages) {
      const links = linksOf(page);
      expect(links.length).toBeGreaterThan(0);
      for (const link of links)
        expect([page, files.includes(link) ? link : `${link} (not shipped)`]).toEqual([page, link]);
    }
  });

  it("source maps carry their TypeScript sources, so stack traces resolve in users' apps", () => {
    const maps = files.filter((file) => file.endsWith('.js.map'));
    expect(maps.length).toBeGreaterThan(50);
    for (const map of maps) {
      const { sources, sourcesContent } = JSON.parse(readFileSync(join(dir, 'package', map), 'utf8')) as {
        sources: string[];
        sourcesContent?: string[];
      };
      expect(sourcesContent?.length).toBe(sources.length);
      expect(sourcesContent!.every((content) => content.length > 0)).toBe(true);
    }
  });
});
