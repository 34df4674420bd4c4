// esbuild bundles the page's stylesheet when the entry imports it.
declare module '*.css';
