// Lint for the mistakes asynchronous TypeScript invites, and nothing else: a promise nobody
// awaits or catches (its rejection ends the process as unhandled, or is lost), a promise
// passed where a plain callback is expected (an async listener of an EventEmitter, a timer or
// a server, whose rejection no caller sees), and an await of something that is not a promise.
// The rules need types, so they read the program as tsconfig.test.json defines it (src/,
// scripts/, test/ and vitest.config.ts); style is left to tsc's strict options and review.
import { defineConfig } from 'eslint/config'
import tseslint from 'typescript-eslint'

export default defineConfig(
  { ignores: ['dist/', 'node_modules/', 'prebuilds/', 'coverage/', '.bench/', '.scratch/', '.demo/', 'demo-mount/', 'bench-results/'] },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { project: './tsconfig.test.json', tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
    },
  },
)
