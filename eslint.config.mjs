// Lint rules that keep the architecture honest: the engine imports nothing from the editor or the
// operating system, promises are awaited, equality is strict, exports are named.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'node_modules/**', 'bench/out/**', 'test/fixtures/**', '.cache/**'] },
  js.configs.recommended,
  { files: ['**/*.mjs'], languageOptions: { globals: globals.node } },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      eqeqeq: ['error', 'always'],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-restricted-exports': [
        'error',
        {
          restrictDefaultExports: {
            direct: true,
            named: true,
            defaultFrom: true,
            namedFrom: true,
            namespaceFrom: true,
          },
        },
      ],
    },
  },
  {
    // node:test's describe/it return promises the runner itself awaits.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-floating-promises': 'off' },
  },
  {
    // The engine is pure: it runs in Node, the CLI, tests and a browser (web extension).
    files: ['src/engine/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: ['vscode', 'fs', 'child_process', 'path', 'os'],
          patterns: [
            { group: ['node:*'], message: 'src/engine must not use Node-only modules: it also runs in a browser.' },
          ],
        },
      ],
      'no-restricted-globals': ['error', 'process', 'require', 'Buffer'],
    },
  },
);
