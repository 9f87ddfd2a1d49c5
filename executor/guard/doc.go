// Package guard is the SSRF guard: it decides which IP addresses an outgoing
// HTTP request made on behalf of a workflow step or a webhook may connect to,
// and builds the HTTP transport and client that enforce that decision. The
// check applies to the URL as resolved, after every ${{…}} reference has
// been substituted, so a URL that is wholly a secret is checked too.
//
// # Entry points
//
//   - [Guard] holds the policy. Its zero value (and a nil *Guard) applies the
//     deny-list only; [Guard.Allow] adds prefixes that are allowed even if the
//     deny-list says otherwise (tests that talk to 127.0.0.1, or an operator
//     who must reach one internal service).
//   - [Guard.CheckAddr] is the decision for one IP address; a refusal is a
//     [*DeniedError] naming the address and its class in words
//     ("address 127.0.0.1 is denied: loopback").
//   - [Guard.CheckURL] is an early, friendly check of a URL: scheme http or
//     https ([*SchemeError]), a host ([ErrNoHost]), and, when the host is an IP
//     literal (including the legacy spellings 2130706433, 0x7f.1, 0177.0.0.1),
//     that address. It is a convenience, not the protection.
//   - [Guard.Control] is a [net.Dialer] Control hook: it checks the IP
//     actually dialled, after name resolution, for every connection attempt.
//     This is the authoritative check. It covers every spelling of an address
//     that a resolver may accept and defeats DNS rebinding, because what is
//     checked is what the socket connects to.
//   - [Guard.Dialer], [Guard.Transport] and [Guard.Client] assemble a
//     [net.Dialer] with that hook, an [http.Transport] that never uses a proxy
//     (a proxy would make the dialled IP the proxy's), and an [http.Client]
//     that never follows redirects (a 3xx is the step's response).
//   - [SendOnce] wraps a transport so that it never sends a request a
//     second time on its own (net/http does, for a GET or a request with an
//     Idempotency-Key, after a reused connection fails, and over HTTP/2
//     after a reset stream), and reports a request written whole that got
//     no complete answer as an [*UnansweredError]; [Guard.SendOnceVia] is
//     the client the executor and the webhook deliveries use.
//
// A refusal at dial time reaches the caller wrapped by net/http
// (*url.Error → *net.OpError → *DeniedError); errors.As finds it:
//
//	var denied *guard.DeniedError
//	if errors.As(err, &denied) { … denied.Addr, denied.Class … }
//
// # What is denied
//
// The rule: an address is denied when it is in one of the named classes —
// loopback, private (RFC 1918), link-local, carrier-grade NAT, this
// network 0.0.0.0/8, multicast, broadcast, reserved 240.0.0.0/4,
// benchmarking; IPv6 unspecified, loopback, unique local and link-local;
// and any IPv4-mapped, IPv4-compatible, NAT64, 6to4 or Teredo address whose
// embedded IPv4 is denied — or when IANA's special-purpose address
// registries say it is not globally reachable — that is, it can only mean
// something inside some operator's network, where a request from us has no
// business going. Rows marked [+] below are denied beyond the named
// classes (by the registry, or for the reason given). A row the
// registries mark globally reachable is a public service and is allowed,
// even inside a block that is otherwise denied. The tables below follow the
// IANA IPv4 Special-Purpose Address Registry as last updated 2020-09-04 and
// the IANA IPv6 Special-Purpose Address Registry as last updated 2024-10-22
// (https://www.iana.org/assignments/iana-ipv4-special-registry and
// iana-ipv6-special-registry), row by row, "Globally Reachable" column
// first.
//
// IPv4 (each entry is one row of the tables in table.go):
//
//	0.0.0.0/8          this network (RFC 791, RFC 1122; Linux connects 0.0.0.0 to the local host)   not reachable
//	10.0.0.0/8         private (RFC 1918)                                      not reachable
//	100.64.0.0/10      carrier-grade NAT (RFC 6598)                            not reachable
//	127.0.0.0/8        loopback                                                not reachable
//	169.254.0.0/16     link-local (RFC 3927; holds the cloud metadata service 169.254.169.254)       not reachable
//	172.16.0.0/12      private (RFC 1918)                                      not reachable
//	192.0.0.0/24       IETF protocol assignments (RFC 6890)                    not reachable  [+]
//	                   (DS-Lite 192.0.0.0/29, the dummy address 192.0.0.8, NAT64 discovery 192.0.0.170/31),
//	                   except the two rows marked reachable, which are allowed:
//	                   192.0.0.9/32 Port Control Protocol anycast (RFC 7723) and
//	                   192.0.0.10/32 TURN anycast (RFC 8155)
//	192.0.2.0/24       documentation TEST-NET-1 (RFC 5737)                     not reachable  [+]
//	192.88.99.0/24     6to4 relay anycast (RFC 7526, deprecated)               deprecated     [+]
//	192.168.0.0/16     private (RFC 1918)                                      not reachable
//	198.18.0.0/15      benchmarking (RFC 2544)                                 not reachable
//	198.51.100.0/24    documentation TEST-NET-2 (RFC 5737)                     not reachable  [+]
//	203.0.113.0/24     documentation TEST-NET-3 (RFC 5737)                     not reachable  [+]
//	224.0.0.0/4        multicast                                               (named class; not in the registry)
//	255.255.255.255/32 broadcast                                               not reachable
//	240.0.0.0/4        reserved                                                not reachable
//
// The deprecated 6to4 relay anycast is denied because by design it reaches
// whichever relay is nearest, possibly one inside the operator's own
// network. The other rows the IPv4 registry marks globally reachable are
// allowed: AS112 192.31.196.0/24 and 192.175.48.0/24, AMT 192.52.193.0/24.
//
// IPv6:
//
//	::/128             IPv6 unspecified                                        not reachable
//	::1/128            loopback                                                not reachable
//	::ffff:0:0/96      IPv4-mapped: the verdict of the embedded IPv4           not reachable (as such)
//	::/96              IPv4-compatible (RFC 4291, deprecated): the verdict of the embedded IPv4
//	64:ff9b::/96       NAT64 well-known prefix (RFC 6052): the verdict of the embedded IPv4   reachable
//	64:ff9b:1::/48     NAT64 local-use (RFC 8215)                              not reachable  [+]
//	100::/64           discard-only (RFC 6666)                                 not reachable  [+]
//	2001::/23          IETF protocol assignments                               not reachable  [+]
//	                   (benchmarking 2001:2::/48 and the deprecated ORCHID 2001:10::/28 are named
//	                   on their own), except:
//	  2001::/32        Teredo (RFC 4380): denied if the client IPv4 (stored XOR 0xffffffff)
//	                   or the Teredo server IPv4 is denied                     N/A
//	  2001:1::1/128    Port Control Protocol anycast (RFC 7723)                reachable: allowed
//	  2001:1::2/128    TURN anycast (RFC 8155)                                 reachable: allowed
//	  2001:3::/32      AMT (RFC 7450)                                          reachable: allowed
//	  2001:4:112::/48  AS112-v6 (RFC 7535)                                     reachable: allowed
//	  2001:20::/28     ORCHIDv2 (RFC 7343)                                     reachable: allowed
//	  2001:30::/28     Drone Remote ID Protocol entity tags (RFC 9374)        reachable: allowed
//	2001:db8::/32      documentation (RFC 3849)                                not reachable  [+]
//	2002::/16          6to4 (RFC 3056): the verdict of the IPv4 in bits 16–47  N/A
//	3fff::/20          documentation (RFC 9637)                                not reachable  [+]
//	fc00::/7           IPv6 unique local (RFC 4193)                            not reachable
//	fe80::/10          link-local                                              not reachable
//	fec0::/10          IPv6 site-local (RFC 3879, deprecated; not in the registry)          [+]
//	ff00::/8           multicast (named class; not in the registry)
//	outside 2000::/3   IPv6 reserved: IANA has allocated only 2000::/3 for global unicast;
//	                   everything else (apart from the forms above) is reserved or special-
//	                   purpose — such as Segment Routing SIDs 5f00::/16 (RFC 9602, not
//	                   reachable) — never a public web server                  [+]
//
// The registry's globally reachable 2620:4f:8000::/48 (AS112 direct
// delegation, RFC 7534) is ordinary global unicast here, and allowed.
// Rows marked N/A (Teredo, 6to4) embed an IPv4 address and get its verdict,
// as the rule above says; the IPv4-mapped and NAT64 forms likewise.
//
// An address and its IPv4-mapped form always get the same verdict. An IPv6
// zone (fe80::1%eth0) is ignored when matching.
//
// # The allow-list
//
// [Guard.Allow] wins over the deny-list for any address inside one of its
// prefixes (matched against the address dialled and its IPv4-mapped /
// unmapped twin, never against an IPv4 embedded in a NAT64, 6to4 or Teredo
// address: to allow those, list their IPv6 prefix).
//
// # Why not code.dny.dev/ssrf
//
// That library (v0.3.0) is small and correct for what it does, but it allows
// only ports 80 and 443 by default, refuses every IPv6 address outside
// 2000::/3 wholesale (so ::ffff:8.8.8.8 is denied while 8.8.8.8 is allowed,
// and on an IPv6-only host behind NAT64 every IPv4 destination, 64:ff9b::/96,
// is refused), refuses all of 6to4 and Teredo instead of judging the embedded
// IPv4 as our rule does, does not decode embedded addresses into a reason,
// and reports refusals as formatted strings around a sentinel, with no
// address or class a caller can read. The table here is a few dozen lines of
// net/netip.
package guard
