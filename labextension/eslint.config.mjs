// eslint for the extension's TypeScript (src/ and test/), with the rule set of the JupyterLab extension template:
// eslint and typescript-eslint recommended, @jupyter/eslint-plugin, interfaces named IPascalCase, braces on every
// block, === only, arrow callbacks; prettier (settings in package.json) runs as a rule and owns all formatting.
// `npm run eslint:check` runs it (part of `npm run lint:check`, which CI runs); `npm run eslint` applies the fixes.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';
import jupyter from '@jupyter/eslint-plugin';
import prettierRecommended from 'eslint-plugin-prettier/recommended';
import globals from 'globals';

export default defineConfig(
  // build scripts and output are plain node JavaScript outside both tsconfigs; only the TypeScript is linted
  {
    ignores: [
      'node_modules',
      'lib',
      'test-build',
      '**/*.js',
      '**/*.mjs',
      '**/*.d.ts'
    ]
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  jupyter.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      globals: { ...globals.browser, ...globals.es2015, ...globals.node },
      parserOptions: {
        project: ['tsconfig.json', 'tsconfig.test.json'],
        sourceType: 'module'
      }
    },
    rules: {
      '@typescript-eslint/naming-convention': [
        'error',
        {
          selector: 'interface',
          format: ['PascalCase'],
          custom: { regex: '^I[A-Z]', match: true }
        }
      ],
      '@typescript-eslint/no-unused-vars': ['warn', { args: 'none' }],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-namespace': 'off',
      '@typescript-eslint/no-use-before-define': 'off',
      curly: ['error', 'all'],
      eqeqeq: 'error',
      'prefer-arrow-callback': 'error',
      // lazynb is not localized: the trace views also run outside JupyterLab (the standalone bundle) with no
      // translator, and the rule sees only some strings (attributes, textContent), so obeying it would translate part of a view
      'jupyter/no-untranslated-string': 'off'
    }
  },
  prettierRecommended
);
