import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "client/out/**", "bundled/**", "node_modules/**"] },
  ...tseslint.configs.recommended,
);
