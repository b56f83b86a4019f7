// The linter `npm test` runs (scripts/test.sh): typescript-eslint's recommended rules, with unused
// names allowed when they start with "_" (a key left out of a copy, an argument a callback must take).
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/**", "tools/**", "test-artifacts/**", "bench/results/**", ".pulumi-fleet/**", ".scratch/**"] },
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_", ignoreRestSiblings: true }],
      "@typescript-eslint/no-unused-expressions": ["error", { allowShortCircuit: true, allowTernary: true }],
      // A variable a closure reads before its one assignment stays `let`; so does a destructuring with one reassigned name.
      "prefer-const": ["error", { destructuring: "all", ignoreReadBeforeAssign: true }],
      "no-control-regex": "error",
    },
  },
  // Tests, benchmarks and the local clusters' harness read what kubectl, API servers and the engine print: untyped JSON.
  { files: ["test/**", "bench/**", "automation/clusters/**"], rules: { "@typescript-eslint/no-explicit-any": "off", "@typescript-eslint/no-unused-expressions": "off" } },
  // The CommonJS shims (scripts/run-ts.js and the like) load with require.
  { files: ["**/*.js"], rules: { "@typescript-eslint/no-require-imports": "off" } },
);
