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
)
