package daemon

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/foya-dev/foya/edge"
	"github.com/foya-dev/foya/graph"
	"github.com/foya-dev/foya/internal/cmdutil"
)

// requestLimitFlags adds the `foya serve` flags of the request bounds
// (docs/limits.md) to fs; the returned func reads them once fs is parsed.
func requestLimitFlags(fs *flag.FlagSet) func() (edge.Limits, error) {
	body := byteFlag(edge.MaxBodyBytes)
	vars := byteFlag(edge.MaxVariablesBytes)
	resp := byteFlag(graph.MaxResponseBytes)
	fs.Var(&body, "max-request-body", "largest JSON request body (POST, SSE), e.g. 8MiB (multipart uploads have their own limit)")
	fs.Var(&vars, "max-variables", "largest variables (with extensions) of one JSON request, as compact JSON, e.g. 1MiB")
	fs.Var(&resp, "max-response", "largest GraphQL response (a query's or mutation's result, one subscription event), at least 64KiB, e.g. 16MiB; larger ones are refused with BAD_INPUT")
	perPeer := fs.Int("max-in-flight-per-peer", edge.MaxInFlightPerPeer, "HTTP requests one peer (IP, /64 for IPv6) may have in flight; more get 429 RATE_LIMITED")
	expensive := fs.Int("max-expensive", edge.MaxExpensive, "expensive requests (uploads, imports, exports, large bodies, costly operations) the kernel runs at once; more get 429 RATE_LIMITED")
	perConn := fs.Int("max-subscriptions-per-connection", edge.MaxSubscriptionsPerConnection, "subscriptions one WebSocket connection may run at once")
	subs := fs.Int("max-subscriptions", edge.MaxSubscriptions, "subscriptions the kernel runs at once (WebSocket and SSE)")
	return func() (edge.Limits, error) {
		for name, v := range map[string]int{"max-in-flight-per-peer": *perPeer, "max-expensive": *expensive,
			"max-subscriptions-per-connection": *perConn, "max-subscriptions": *subs} {
			if v < 1 {
				return edge.Limits{}, cmdutil.Usagef("--%s %d: must be at least 1", name, v)
			}
		}
		if resp < minResponse {
			return edge.Limits{}, cmdutil.Usagef("--max-response %d: must be at least 64KiB (the clients' own queries must fit)", resp)
		}
		if vars > body {
			return edge.Limits{}, cmdutil.Usagef("--max-variables %d is larger than --max-request-body %d", vars, body)
		}
		return edge.Limits{MaxBodyBytes: int64(body), MaxVariablesBytes: int64(vars), MaxInFlightPerPeer: *perPeer,
			MaxResponseBytes: int64(resp), MaxExpensive: *expensive, MaxSubscriptionsPerConnection: *perConn, MaxSubscriptions: *subs}, nil
	}
}

// minResponse is the smallest --max-response.
const minResponse = 64 << 10

// byteFlag is a size in bytes, written as a number of bytes or with a
// KiB, MiB or GiB suffix.
type byteFlag int64

func (b *byteFlag) String() string { return strconv.FormatInt(int64(*b), 10) }

func (b *byteFlag) Set(s string) error {
	mult := int64(1)
	t := strings.TrimSpace(s)
	for suffix, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if strings.HasSuffix(t, suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, suffix)), m
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 1 || n > (1<<40)/mult {
		return fmt.Errorf("%q: want a positive size in bytes, or with KiB, MiB or GiB, e.g. 1MiB", s)
	}
	*b = byteFlag(n * mult)
	return nil
}
