// One linter (ESLint + typescript-eslint) and one formatter (Prettier, see .prettierrc.json),
// both run by `npm test` through `npm run lint`. Type-aware rules are limited to the ones that
// catch coordination bugs: a promise nobody awaits is a lock released too early or an error lost.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      '**/dist/**',
      'bench-results/**',
      'coverage/**',
      'node_modules/**',
      'test/fixtures/*/node_modules/**',
      'test/fixtures/*/dist/**',
      // The fixture applications: type-checked by their tests against their own node_modules.
      'test/fixtures/*/src/**',
      'test/fixtures/app-src/**',
      'test/fixtures/*/own/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.mts', '**/*.cts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/await-thenable': 'error',
      // `(...args: any[])` is how a method's signature is matched; other `any`s still need a reason.
      '@typescript-eslint/no-explicit-any': ['error', { ignoreRestArgs: true }],
      // Nest's own types (decorators, class references) are written with `Function`.
      '@typescript-eslint/no-unsafe-function-type': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  {
    // Tests load fresh module copies and optional peers with require(), on purpose.
    // Tests and benchmarks also read other processes' JSON answers (Kazoo, Curator, workers) as `any`.
    files: ['**/*.spec.ts', 'test/**/*.ts', 'bench/**/*.ts', '**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off', '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    languageOptions: {
      globals: {
        require: 'readonly',
        module: 'writable',
        process: 'readonly',
        console: 'readonly',
        __dirname: 'readonly',
      },
    },
  },
  prettier,
);
