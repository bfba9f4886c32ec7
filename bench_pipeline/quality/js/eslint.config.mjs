// The one ESLint configuration every project is measured with (the agent's own config is
// never looked up: `--no-config-lookup -c` this file, `--no-inline-config`).
// The pinned toolchain is found through QUALITY_TOOLCHAIN, because this file does not live
// next to the toolchain's node_modules.
import path from "node:path";
import { createRequire } from "node:module";

const require = createRequire(path.join(process.env.QUALITY_TOOLCHAIN, "package.json"));
const js = require("@eslint/js");
const tseslint = require("typescript-eslint");
const globals = require("globals");
const sonarjs = require("eslint-plugin-sonarjs");

const SOURCES = ["**/*.js", "**/*.mjs", "**/*.cjs", "**/*.jsx", "**/*.ts", "**/*.mts", "**/*.cts", "**/*.tsx"];
const TYPESCRIPT = ["**/*.ts", "**/*.mts", "**/*.cts", "**/*.tsx"];

export default [
  { ignores: ["**/node_modules/**", "**/dist/**", "**/build/**", ".quality/**"] },
  { files: SOURCES, ...js.configs.recommended },
  ...tseslint.configs.recommended.map((config) => ({ ...config, files: TYPESCRIPT })),
  {
    files: SOURCES,
    languageOptions: {
      ecmaVersion: "latest",
      sourceType: "module",
      globals: { ...globals.browser },
      parserOptions: { ecmaFeatures: { jsx: true } },
    },
    plugins: { sonarjs: sonarjs.default ?? sonarjs },
    rules: {
      eqeqeq: ["error", "always"],
      "no-var": "error",
      "prefer-const": "warn",
      // Threshold 0: every function with any complexity is reported, so the message carries
      // its score; the Python side reads the maximum and does not count these as warnings.
      "sonarjs/cognitive-complexity": ["warn", 0],
    },
  },
];
