import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';

const repo = resolve(__dirname, '../..');
const pages = [
  'README.md',
  ...readdirSync(join(repo, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsIn(file: string): Set<string> {
  const anchors = new Set<string>();
  let fence = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('```')) fence = !fence;
    const heading = !fence && /^#{1,6} (.*)$/.exec(line);
    if (heading) anchors.add(anchorOf(heading[1]));
  }
  return anchors;
}

/** Relative links of a markdown page (outside code), as [target file, anchor]. */
function linksIn(page: string): Array<[string, string | undefined]> {
  const text = readFileSync(join(repo, page), 'utf8').replace(/```[\s\S]*?```/g, '');
  return [...text.matchAll(/\]\((?!https?:|mailto:)([^)\s]*)\)/g)].map((match) => {
    const [path, anchor] = match[1].split('#');
    return [path ? relative(repo, resolve(dirname(join(repo, page)), path)) : page, anchor];
  });
}

/** Whether a cited glob (`*` within one path segment) names at least one file. */
function globMatches(path: string): boolean {
  const dir = join(repo, dirname(path));
  if (!existsSync(dir)) return false;
  const pattern = new RegExp(
    `^${basename(path)
      .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '[^/]*')}$`,
  );
  return readdirSync(dir).some((name) => pattern.test(name));
}

describe('links in the README and docs/', () => {
  it('knows GitHub anchors', () => {
    expect(anchorOf('Errors in HTTP and RPC handlers')).toBe('errors-in-http-and-rpc-handlers');
    expect(anchorOf('Scheduled jobs (`@Cron`) that run once')).toBe('scheduled-jobs-cron-that-run-once');
    expect(anchorOf('Interoperability: Kazoo and Curator on the same locks')).toBe(
      'interoperability-kazoo-and-curator-on-the-same-locks',
    );
  });

  it.each(pages)('%s: every relative link reaches a file, and every anchor a heading', (page) => {
    const broken = linksIn(page).filter(([file, anchor]) => {
      const path = join(repo, file);
      if (!existsSync(path)) return true;
      return anchor !== undefined && file.endsWith('.md') && !anchorsIn(path).has(anchor);
    });
    expect(broken).toEqual([]);
  });

  it.each(pages)('%s: every source path it cites (`lib/…`, `test/…`) exists', (page) => {
    const text = readFileSync(join(repo, page), 'utf8');
    const cited = [...text.matchAll(/`((?:lib|test|bench|scripts|sample-app)\/[^`\s]+)`/g)].map((match) => match[1]);
    const missing = cited.filter((path) => !(path.includes('*') ? globMatches(path) : existsSync(join(repo, path))));
    expect(missing).toEqual([]);
  });

  it('the docs are all reachable from the README', () => {
    const linked = new Set(linksIn('README.md').map(([file]) => file));
    expect(pages.filter((page) => page !== 'README.md' && !linked.has(page))).toEqual([]);
  });
});
