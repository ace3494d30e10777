/**
 * Who may use the web view: requests must come to the loopback address the view listens on
 * (a page on another site cannot reach it through DNS rebinding) and carry the access token,
 * either as `?token=` (the URL `bub ui` prints) or as the cookie the first such request sets.
 */
import { timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { getCookie, setCookie } from "hono/cookie";

/** The cookie holding the token; named after the port, so two views on one host do not clash. */
export function tokenCookieName(port: number): string {
  return `bub_ui_${port}`;
}

function sameToken(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Host names a browser on this machine uses for the view. */
function allowedHost(host: string | undefined, port: number): boolean {
  return host === `127.0.0.1:${port}` || host === `localhost:${port}`;
}

/**
 * The access check: 403 for a foreign `Host`, 401 without a token, 403 with a wrong one. A
 * right `?token=` on a page sets the cookie and redirects to the same URL without the token,
 * so it stays out of the history and the address bar.
 */
export function requireToken(token: string, port: () => number): MiddlewareHandler {
  return async function requireToken(context, next) {
    const cookie = tokenCookieName(port());
    if (!allowedHost(context.req.header("host"), port())) return context.text("This view answers on 127.0.0.1 only.\n", 403);
    const fromQuery = context.req.query("token");
    const given = fromQuery ?? getCookie(context, cookie);
    if (given === undefined || given === "") return context.text("Open the URL bub ui printed: it carries the access token.\n", 401);
    if (!sameToken(given, token)) return context.text("Wrong access token: open the URL bub ui printed.\n", 403);
    if (fromQuery !== undefined && context.req.method === "GET") {
      setCookie(context, cookie, token, { httpOnly: true, sameSite: "Strict", path: "/" });
      const url = new URL(context.req.url);
      url.searchParams.delete("token");
      return context.redirect(`${url.pathname}${url.search}`, 303);
    }
    await next();
  };
}
