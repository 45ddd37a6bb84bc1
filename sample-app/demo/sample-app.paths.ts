import { join } from 'node:path';

/** The repository root. */
export const ROOT = join(__dirname, '..', '..');
/** What `nest build` produces (see nest-cli.json and sample-app/tsconfig.app.json). */
export const BUILT_MAIN = join(ROOT, 'sample-app', 'dist', 'sample-app', 'src', 'main.js');
/** The TypeScript entry, run through scripts/ts-register.cjs when no build is wanted. */
export const SOURCE_MAIN = join(ROOT, 'sample-app', 'src', 'main.ts');
export const TS_REGISTER = join(ROOT, 'scripts', 'ts-register.cjs');
