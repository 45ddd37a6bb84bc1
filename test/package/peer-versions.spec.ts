import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

// semver (a dependency of the test tools) reads ranges as npm does.
const semver = require('semver') as {
  satisfies(version: string, range: string): boolean;
  intersects(a: string, b: string): boolean;
  minVersion(range: string): { version: string } | null;
};

const repo = resolve(__dirname, '../..');
const json = <T>(path: string): T => JSON.parse(readFileSync(join(repo, path), 'utf8')) as T;

interface Manifest {
  engines: { node: string };
  peerDependencies: Record<string, string>;
  dependencies: Record<string, string>;
}
interface Lockfile {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[] }>;
}

/** The README's table of versions by Nest major: row label → { '11': cell, '12': cell }. */
function readmeTable(): Map<string, Record<'11' | '12', string>> {
  const readme = readFileSync(join(repo, 'README.md'), 'utf8');
  const install = readme.slice(readme.indexOf('## Install'), readme.indexOf('## Use it'));
  const rows = install
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .map((line) =>
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim().replace(/`/g, '')),
    );
  expect(rows[0]).toEqual(['', 'Nest 11', 'Nest 12']);
  return new Map(rows.slice(2).map(([label, nest11, nest12]) => [label, { '11': nest11, '12': nest12 }]));
}

/** A cell as a semver range: `11` is 11.x, `1.4+` is >=1.4, `22.12+ or 24+` is >=22.12 <23 || >=24. */
function rangeOf(cell: string): string {
  const parts = cell.split(' or ').map((part) => part.trim());
  return parts
    .map((part, i) => {
      const floor = /^(\d+(?:\.\d+)?)\+$/.exec(part);
      if (!floor) return /^\d+$/.test(part) ? `${part}.x` : part;
      // Followed by another: that floor's major only.
      return i < parts.length - 1 ? `>=${floor[1]} <${Number.parseInt(floor[1]) + 1}` : `>=${floor[1]}`;
    })
    .join(' || ');
}

/** The test applications that run the packed library, by Nest major (test/fixtures). */
const FIXTURE = { '11': 'test/fixtures/nest11-cjs', '12': 'test/fixtures/nest12-esm' } as const;

/**
 * The README names, for each Nest major, the Node version and the optional peers' majors
 * that go with it. Checked against package.json's peer ranges and against the test
 * applications that run the packed library on each major (their manifests and lockfiles).
 */
describe("the README's versions by Nest major", () => {
  let table: ReturnType<typeof readmeTable>;
  beforeAll(() => (table = readmeTable()));
  const pkg = json<Manifest>('package.json');

  it("names a version of every optional peer for each major, within package.json's peer range", () => {
    const optional = Object.keys(json<{ peerDependenciesMeta: object }>('package.json').peerDependenciesMeta);
    expect(optional.length).toBeGreaterThan(0);
    for (const peer of [...optional, '@nestjs/schedule']) {
      const row = table.get(peer);
      expect([peer, row]).toEqual([
        peer,
        expect.objectContaining({ '11': expect.any(String), '12': expect.any(String) }),
      ]);
      for (const major of ['11', '12'] as const) {
        if (!pkg.peerDependencies[peer]) continue; // not a peer of ours (@nestjs/schedule: used by your code only)
        expect([peer, major, semver.intersects(rangeOf(row![major]), pkg.peerDependencies[peer])]).toEqual([
          peer,
          major,
          true,
        ]);
      }
    }
  });

  it('names what the test application of each major runs on (Nest, terminus, schedule)', () => {
    for (const major of ['11', '12'] as const) {
      const { dependencies } = json<Manifest>(`${FIXTURE[major]}/package.json`);
      expect(semver.satisfies(dependencies['@nestjs/core'], `${major}.x`)).toBe(true);
      for (const peer of ['@nestjs/terminus', '@nestjs/schedule']) {
        const named = rangeOf(table.get(peer)![major]);
        expect([major, peer, dependencies[peer], semver.satisfies(dependencies[peer], named)]).toEqual([
          major,
          peer,
          dependencies[peer],
          true,
        ]);
      }
    }
  });

  it('names a Node every installed package of that major accepts, and none lower on Nest 12 (EBADENGINE)', () => {
    const enginesOf = (major: '11' | '12'): Array<[string, string]> =>
      Object.entries(json<Lockfile>(`${FIXTURE[major]}/package-lock.json`).packages).flatMap(([path, entry]) => {
        const node = !Array.isArray(entry.engines) ? entry.engines?.node : undefined;
        return node ? [[path, node] as [string, string]] : [];
      });
    const node = (major: '11' | '12'): string => rangeOf(table.get('Node')![major]);
    // The package's own engines are Nest 11's floor.
    expect(semver.minVersion(pkg.engines.node)!.version).toBe(semver.minVersion(node('11'))!.version);
    for (const major of ['11', '12'] as const) {
      const refused = enginesOf(major).filter(
        ([, engines]) =>
          // each part of the README's range, at its lowest version
          !node(major)
            .split(' || ')
            .every((part) => semver.satisfies(semver.minVersion(part)!.version, engines)),
      );
      expect([major, refused]).toEqual([major, []]);
    }
    // Why not lower: Nest 12's file-type refuses Node 20, and terminus 12 a Node 22 before 22.12.
    const refusing = (version: string): string[] =>
      enginesOf('12')
        .filter(([, engines]) => !semver.satisfies(version, engines))
        .map(([path]) => path);
    expect(refusing('20.99.0')).toContain('node_modules/file-type');
    expect(refusing('22.11.0')).toContain('node_modules/@nestjs/terminus');
  });
});
