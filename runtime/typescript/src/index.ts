// The runtime of a Holon agent in TypeScript: `serve(run)`, `Ctx` (`ctx.fail`, `ctx.download`,
// `ctx.signal`), and the function mode `holon-test` calls the agent through, at the kit's version.

export { type Ctx, Failure } from './ctx.ts';
export { DownloadError, type DownloadErrorKind } from './files.ts';
export { type ServeOptions, serve } from './serve.ts';
export { VERSION } from './version.ts';
