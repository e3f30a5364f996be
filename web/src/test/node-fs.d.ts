// The app's type environment is the browser's (no @types/node); the opt-in server test
// only needs to read the server's log file, so it declares just that.
declare module 'node:fs/promises' {
  export function readFile(path: string, encoding: 'utf8'): Promise<string>;
}
