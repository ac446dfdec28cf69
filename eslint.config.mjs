// Type-aware lint: no-floating-promises catches tool handlers whose failure would vanish.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'test/e2e/**', 'scripts/**', '*.mjs', 'test-results/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['src/**/*.ts', 'webview/**/*.ts', 'webview/**/*.tsx', 'test/unit/**/*.ts', 'test/webview/**/*.ts', 'bench/**/*.ts'],
    languageOptions: { parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // The engine runs in the CLI, the MCP server, the language server and tests: it must never reach for VS Code.
    files: ['src/core/**/*.ts', 'src/server/**/*.ts', 'webview/**/*.ts', 'webview/**/*.tsx'],
    rules: { 'no-restricted-imports': ['error', { paths: ['vscode'] }] },
  },
);
