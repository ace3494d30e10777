/** Rewrites the builtin imports of one esbuild output file into process.getBuiltinModule() consts. */
export function rewriteBuiltinImports(code: string): string;
/** Bundles the `bub` binary into `outdir` (default dist/bin) and returns the bin's path. */
export function bundleCli(options?: { outdir?: string }): Promise<string>;
