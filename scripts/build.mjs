// Builds the package twice from one source: ESM (dist/esm) and CommonJS (dist/cjs), each
// folder marked with its module type, so `import` and `require` both get native code.
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';

const tsc = (outDir, module, moduleResolution) =>
  execFileSync(
    process.execPath,
    [
      'node_modules/typescript/bin/tsc',
      '-p',
      'tsconfig.build.json',
      '--outDir',
      outDir,
      '--module',
      module,
      '--moduleResolution',
      moduleResolution,
    ],
    { stdio: 'inherit' },
  );

rmSync('dist', { recursive: true, force: true });
tsc('dist/esm', 'ES2022', 'Bundler');
writeFileSync('dist/esm/package.json', JSON.stringify({ type: 'module' }) + '\n');
tsc('dist/cjs', 'CommonJS', 'Bundler');
writeFileSync('dist/cjs/package.json', JSON.stringify({ type: 'commonjs' }) + '\n');
