// Lets plain `node -r ./scripts/ts-register.cjs file.ts` run this repository's TypeScript
// (worker processes in tests, the demo) without a build: compiles .ts with SWC on load and,
// like the TypeScript compiler, resolves a relative "./x.js" import to "./x.ts".
'use strict';
const Module = require('node:module');
const fs = require('node:fs');
const { transformSync } = require('@swc/core');

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  if (parent && /^\.{1,2}\//.test(request) && request.endsWith('.js')) {
    const candidate = require('node:path').resolve(
      require('node:path').dirname(parent.filename),
      request.slice(0, -3) + '.ts',
    );
    if (fs.existsSync(candidate)) return candidate;
  }
  return resolve.call(this, request, parent, ...rest);
};

require.extensions['.ts'] = function (module, filename) {
  const { code } = transformSync(fs.readFileSync(filename, 'utf8'), {
    filename,
    sourceMaps: 'inline',
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
    },
    module: { type: 'commonjs' },
  });
  module._compile(code, filename);
};
