import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['dist/**', 'dist-*/**', 'node_modules/**', 'coverage/**', 'bench/results/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // The core is framework-free: no Node built-ins, no adapters, no server.
    files: ['core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*'], message: 'core/ must not use Node built-ins' },
            { group: ['**/adapters/**', '**/server/**'], message: 'core/ imports only itself' },
            {
              group: ['better-sqlite3', 'kysely', 'hyper-express', 'pino', 'prom-client'],
              message: 'core/ is framework-free',
            },
          ],
        },
      ],
    },
  },
  {
    // The client runs wherever fetch does and loads nothing of the service: its types only.
    files: ['client/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*'], message: 'client/ runs in browsers too: no Node built-ins' },
            {
              group: ['**/core/**'],
              allowTypeImports: true,
              message: 'client/ takes types from the core, never its code (import type)',
            },
            {
              group: ['**/adapters/**', '**/server/**'],
              message: 'client/ imports no server code',
            },
            {
              group: [
                'typebox',
                'typebox/*',
                'jose',
                'better-sqlite3',
                'kysely',
                'hyper-express',
                'pino',
                'pg',
                'uWebSockets.js',
              ],
              message: 'client/ has no dependency',
            },
          ],
        },
      ],
    },
  },
)
