import { InvalidOptionError } from '../errors/errors.js';

// Characters ZooKeeper refuses in a path (PathUtils.validatePath).
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\ud800-\uf8ff\ufff0-\uffff]/;
const EXPECTED =
  'an absolute ZooKeeper path such as "/locks" (no trailing "/", no empty, "." or ".." segments, no control characters, not under /zookeeper)';

/** Checks the root under which lock directories live; returns it unchanged. */
export function validateRootPath(rootPath: unknown): string {
  const fail = (): never => {
    throw new InvalidOptionError('rootPath', rootPath, EXPECTED);
  };
  if (typeof rootPath !== 'string' || !rootPath.startsWith('/') || rootPath === '/') fail();
  const path = rootPath as string;
  if (path.endsWith('/') || FORBIDDEN.test(path)) fail();
  const segments = path.slice(1).split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) fail();
  if (segments[0] === 'zookeeper') fail();
  return path;
}
