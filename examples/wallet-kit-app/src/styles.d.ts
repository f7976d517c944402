// esbuild bundles imported CSS into app.css (build.mjs); the import has no value.
declare module "*.css";
