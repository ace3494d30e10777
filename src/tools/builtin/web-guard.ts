/**
 * What `web.fetch` may connect to: public unicast addresses, plus the hosts and addresses
 * named in `BUB_WEB_FETCH_ALLOW_HOSTS`. A URL's host is resolved first and every address it
 * resolves to is checked; the connection then goes to those checked addresses (see
 * {@link pinnedLookup}), so a second DNS answer cannot send it elsewhere.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import type { LookupAddress } from "node:dns";
import ipaddr from "ipaddr.js";
import { isRecord } from "../../kernel/guards.ts";
import { BubError } from "../../kernel/errors.ts";

/** The setting that opens named hosts on purpose. */
export const ALLOW_HOSTS_SETTING = "BUB_WEB_FETCH_ALLOW_HOSTS";

/** How each non-public range reads in a refusal. */
const RANGE_WORDS: Readonly<Record<string, string>> = {
  unspecified: "an unspecified",
  broadcast: "a broadcast",
  multicast: "a multicast",
  linkLocal: "a link-local",
  loopback: "a loopback",
  carrierGradeNat: "a carrier-grade NAT",
  private: "a private (RFC 1918)",
  reserved: "a reserved",
  as112: "an AS112",
  amt: "an AMT",
  uniqueLocal: "a unique-local (fc00::/7)",
  ipv4Mapped: "an IPv4-mapped",
  deprecatedSiteLocal: "a site-local",
  discard: "a discard-only",
  rfc6145: "an IPv4-translated",
  rfc6052: "a NAT64",
  "6to4": "a 6to4",
  teredo: "a Teredo",
  benchmarking: "a benchmarking",
  as112v6: "an AS112",
  deprecatedOrchid: "an ORCHID",
  orchid2: "an ORCHIDv2",
  droneRemoteIdProtocolEntityTags: "a DRIP",
  segmentRouting: "a segment-routing",
};

/** The address in its canonical text form (IPv4-mapped IPv6 becomes IPv4), or null when `text` is no IP address. */
export function canonicalAddress(text: string): string | null {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  if (!ipaddr.isValid(bare)) return null;
  // ipaddr.isValid accepts IPv4 forms like "127.1" and "0x7f.1" too; process() reads them
  // as the address a URL or connect() would, and unwraps ::ffff:a.b.c.d to a.b.c.d.
  try {
    return ipaddr.process(bare).toString();
  } catch {
    return null;
  }
}

/** An IPv4 address from two 16-bit parts of an IPv6 address. */
function ipv4Of(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/** The IPv4 addresses an IPv6 address carries, in order of importance, and what kind of address carries them. */
interface Embedded {
  readonly form: string;
  readonly addresses: readonly ipaddr.IPv4[];
}

/**
 * The IPv4 address(es) inside an IPv6 address of a form that carries one: IPv4-compatible
 * (`::a.b.c.d`, deprecated), IPv4-translated (`::ffff:0:a.b.c.d`), NAT64 (`64:ff9b::/96`),
 * 6to4 (`2002:AABB:CCDD::/48`) and Teredo (`2001:0::/32`: the client, stored inverted, and
 * the server). Null for any other address. (IPv4-mapped `::ffff:a.b.c.d` is unwrapped by
 * `ipaddr.process` before this is asked.)
 */
function embeddedIPv4(address: ipaddr.IPv6): Embedded | null {
  const p = address.parts;
  const zeros = (from: number, to: number) => p.slice(from, to).every((part) => part === 0);
  const last = ipv4Of(p[6], p[7]);
  // `::` and `::1` are the unspecified and loopback addresses, judged as such by their range.
  if (zeros(0, 6) && !(p[6] === 0 && p[7] <= 1)) return { form: "an IPv4-compatible", addresses: [last] };
  if (zeros(0, 4) && p[4] === 0xffff && p[5] === 0) return { form: "an IPv4-translated", addresses: [last] };
  if (p[0] === 0x64 && p[1] === 0xff9b && zeros(2, 6)) return { form: "a NAT64", addresses: [last] };
  if (p[0] === 0x2002) return { form: "a 6to4", addresses: [ipv4Of(p[1], p[2])] };
  if (p[0] === 0x2001 && p[1] === 0) return { form: "a Teredo", addresses: [ipv4Of(p[6] ^ 0xffff, p[7] ^ 0xffff), ipv4Of(p[2], p[3])] };
  return null;
}

/** The words for an address of `range` that is not public unicast: "a loopback address". */
function rangeWords(range: string): string {
  return `${RANGE_WORDS[range] ?? `a ${range}`} address`;
}

/**
 * Why `address` is not public ("a loopback address"), or null when it is a public unicast
 * address. An IPv6 address that carries an IPv4 address (IPv4-mapped or -compatible,
 * IPv4-translated, NAT64, 6to4, Teredo) is judged by that IPv4 address: refused, with the
 * same words, when it is not public.
 */
export function nonPublicReason(address: string): string | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.process(address);
  } catch {
    return "not an IP address";
  }
  const embedded = parsed instanceof ipaddr.IPv6 ? embeddedIPv4(parsed) : null;
  if (embedded) {
    for (const inner of embedded.addresses) {
      const range = inner.range();
      if (range !== "unicast") return `${embedded.form} address carrying ${inner.toString()}, ${rangeWords(range)}`;
    }
    return null;
  }
  const range = parsed.range();
  return range === "unicast" ? null : rangeWords(range);
}

/** The allow list: host names in lower case, addresses in canonical form. */
export interface AllowList {
  readonly hosts: ReadonlySet<string>;
  readonly addresses: ReadonlySet<string>;
}

/** An allow list from the setting's value: a comma-separated string or a list of strings. */
export function parseAllowList(value: unknown): AllowList {
  const items = Array.isArray(value) ? value.map(String) : typeof value === "string" ? value.split(",") : [];
  const hosts = new Set<string>();
  const addresses = new Set<string>();
  for (const raw of items) {
    const item = raw.trim().toLowerCase();
    if (!item) continue;
    const address = canonicalAddress(item);
    if (address) addresses.add(address);
    else hosts.add(item.replace(/\.$/, ""));
  }
  return { hosts, addresses };
}

/** One vetted destination: the addresses a connection to `host` may use. */
export interface VettedHost {
  /** The URL's host name (brackets removed). */
  readonly host: string;
  /** Every address the host resolved to, each public or allowed. */
  readonly addresses: readonly LookupAddress[];
}

/** How a host name is resolved; tests may swap it. */
export type Resolver = (host: string) => Promise<LookupAddress[]>;

const systemResolver: Resolver = (host) => dnsLookup(host, { all: true });

/**
 * Resolves the host of `url` and checks every address. An allow-list entry matches the
 * URL's host as written (a name case-insensitively, an address in any numeric form), not
 * the addresses a name resolves to: opening 127.0.0.1 does not open `localhost`.
 * @throws BubError `tool` naming the URL, the address and why it is refused.
 */
export async function vetUrl(url: URL, allow: AllowList, resolve: Resolver = systemResolver): Promise<VettedHost> {
  const host = url.hostname.startsWith("[") && url.hostname.endsWith("]") ? url.hostname.slice(1, -1) : url.hostname;
  const hostKey = host.toLowerCase().replace(/\.$/, "");
  const literal = canonicalAddress(host);
  let resolved: LookupAddress[];
  if (literal) {
    resolved = [{ address: literal, family: literal.includes(":") ? 6 : 4 }];
  } else {
    try {
      resolved = await resolve(host);
    } catch (error) {
      const code = isRecord(error) ? error.code : undefined;
      const message = isRecord(error) ? error.message : undefined;
      throw new BubError("temporary", `GET ${url.href} failed: ${code === "ENOTFOUND" || code === "EAI_AGAIN" ? "host not found" : String(message ?? error)}`, {
        details: { url: url.href },
        cause: error,
      });
    }
    if (resolved.length === 0) throw new BubError("temporary", `GET ${url.href} failed: host not found`, { details: { url: url.href } });
  }
  const hostAllowed = allow.hosts.has(hostKey) || (literal !== null && allow.addresses.has(literal));
  if (!hostAllowed) {
    for (const { address } of resolved) {
      const canonical = canonicalAddress(address) ?? address;
      const reason = nonPublicReason(canonical);
      if (reason === null) continue;
      const subject = literal ? canonical : `${host} resolves to ${canonical},`;
      throw new BubError("tool", `web.fetch refused ${url.href}: ${subject} ${literal ? "is " : ""}${reason} (set ${ALLOW_HOSTS_SETTING} to allow it)`, {
        details: { url: url.href, host, address: canonical, reason },
      });
    }
  }
  return { host, addresses: resolved };
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for `net.connect` that answers only with the vetted addresses: the socket goes
 * where the check looked, whatever DNS would answer now.
 */
export function pinnedLookup(vetted: VettedHost): (hostname: string, options: { all?: boolean; family?: number | string }, callback: LookupCallback) => void {
  return (hostname, options, callback) => {
    const wanted = options?.family === 4 || options?.family === "IPv4" ? 4 : options?.family === 6 || options?.family === "IPv6" ? 6 : 0;
    const addresses = vetted.addresses.filter((entry) => wanted === 0 || entry.family === wanted);
    if (addresses.length === 0) {
      const error: NodeJS.ErrnoException = new Error(`no vetted address for ${hostname}`);
      error.code = "ENOTFOUND";
      callback(error, "");
      return;
    }
    if (options?.all) callback(null, addresses);
    else callback(null, addresses[0].address, addresses[0].family);
  };
}
