// ESLint for the Lineage view's ES modules (airflow_lineage_plus/ui/static) and their tests (tests/js):
// the recommended rules, a few that catch this app's likely slips, and the globals each side has.
import js from "@eslint/js";

const browser = Object.fromEntries(
  ["window", "document", "fetch", "URLSearchParams", "CustomEvent", "setTimeout", "clearTimeout",
    "requestAnimationFrame", "Headers", "Promise", "console", "Event", "HTMLElement"].map((name) => [name, "readonly"]),
);
const node = Object.fromEntries(["globalThis", "process", "console"].map((name) => [name, "readonly"]));

export default [
  js.configs.recommended,
  {
    files: ["airflow_lineage_plus/ui/static/**/*.js"],
    languageOptions: { ecmaVersion: 2020, sourceType: "module", globals: browser },
    rules: {
      "no-unused-vars": ["error", { args: "none", caughtErrors: "none" }],
      "no-implicit-globals": "error",
      "no-eval": "error",
      "no-new-func": "error",
      eqeqeq: ["error", "always", { null: "ignore" }],
    },
  },
  {
    files: ["tests/js/**/*.mjs"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: { ...browser, ...node } },
  },
];
