import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { doorRules } from './eslint.doors.js';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        {
          property: 'makeApiClient',
          message:
            'make typed clients with apiClient (src/kube/resend.ts): its calls resend a 429 as client-go does',
        },
      ],
    },
  },
  ...doorRules(),
);
