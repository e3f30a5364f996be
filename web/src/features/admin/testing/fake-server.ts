/** A fetch stand-in for the console's tests and screenshots: answers by "METHOD /api/path". */
import { jsonResponse } from '@/test/fixtures';

export type Handler = (url: URL, init: RequestInit | undefined) => Response | Promise<Response>;

/** Each route is a handler or a plain body (answered 200 as JSON); anything else is a 404. */
export function fakeServer(routes: Record<string, Handler | object>) {
  return (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const raw = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const url = new URL(raw, 'http://localhost');
    const route = routes[`${init?.method ?? 'GET'} ${url.pathname}`];
    if (typeof route === 'function') return Promise.resolve((route as Handler)(url, init));
    if (route) return Promise.resolve(jsonResponse(200, route));
    return Promise.resolve(jsonResponse(404, { success: false, code: 'not_found', message: 'Not found' }));
  };
}

/** An error answer as the server words it. */
export function errorAnswer(status: number, code: string, message: string): Response {
  return jsonResponse(status, { success: false, code, message });
}
