package edge

import (
	"time"

	"github.com/foya-dev/foya/core/archive"
	"github.com/foya-dev/foya/graph"
)

// Bounds of one request and of the streams a client may hold open (the
// GraphQL layer's own, such as graph.MaxResponseBytes, are in graph); each
// is listed with the error a client gets in docs/limits.md.
const (
	// MaxBodyBytes caps a JSON request body (POST, SSE); a larger body is
	// refused with 413 and BAD_INPUT before it is decoded. Multipart uploads
	// keep their own limit (MaxUploadBytes).
	MaxBodyBytes = 8 << 20
	// MaxVariablesBytes caps the variables (with the extensions) of a JSON
	// request and of a WebSocket subscribe message, counted as compact JSON
	// while the body is read and before any of it is decoded (bodyscan.go).
	// Multipart uploads carry their files outside it.
	MaxVariablesBytes = 1 << 20
	// MaxInFlightPerPeer caps the HTTP requests (WebSocket connections
	// included) one peer has in flight: an IP address, or a /64 for IPv6.
	MaxInFlightPerPeer = 16
	// MaxExpensive caps the expensive requests the kernel runs at once:
	// uploads, imports, exports, bodies over ExpensiveBodyBytes and
	// operations whose estimated cost is at least ExpensiveCost.
	MaxExpensive       = 4
	ExpensiveBodyBytes = 256 << 10
	ExpensiveCost      = 10_000
	// RateLimitRetryAfter is the Retry-After of a request refused by one of
	// the two limits above.
	RateLimitRetryAfter = time.Second
	// MaxQueryTokens caps the tokens of one GraphQL document, so that a
	// body of list literals cannot become millions of syntax nodes.
	MaxQueryTokens = 50_000
	// MaxUploadBytes caps a multipart upload request: a foya.session
	// document of archive.MaxImportBytes for importSessionFile, plus the
	// operations. A file part over 8 MiB is spooled to a temporary file, so
	// this bounds disk, not memory; uploadAttachment still refuses a file
	// over core.MaxAttachmentBytes.
	MaxUploadBytes = archive.MaxImportBytes + 1<<20
	// MaxChunkedUploadBytes caps a multipart request without a
	// Content-Length (chunked): the transport holds its files in memory.
	MaxChunkedUploadBytes = 64 << 20
	// MaxWebSocketMessageBytes caps one WebSocket message from a client.
	MaxWebSocketMessageBytes = 1 << 20
	// BodyReadTimeout is how long a JSON body may take to arrive;
	// UploadReadTimeout the same for a multipart upload.
	BodyReadTimeout   = 30 * time.Second
	UploadReadTimeout = 5 * time.Minute
	// HeaderReadTimeout and IdleTimeout are the http.Server's timeouts for
	// request headers and for an idle keep-alive connection.
	HeaderReadTimeout = 10 * time.Second
	IdleTimeout       = 120 * time.Second
	// MaxCost is the highest estimated cost of one operation (see cost.go).
	MaxCost = 100_000
	// MaxDepth is the deepest nesting of fields in one operation.
	MaxDepth = 12
	// MaxSubscriptionsPerConnection caps the subscriptions one WebSocket
	// connection runs at once; MaxSubscriptions those of the whole kernel
	// (WebSocket and SSE together).
	MaxSubscriptionsPerConnection = 100
	MaxSubscriptions              = 1000
)

// wsReadLimit is MaxWebSocketMessageBytes for the transport's pointer field.
var wsReadLimit int64 = MaxWebSocketMessageBytes

// Limits overrides some bounds (tests use small ones); zero fields take the
// defaults above.
type Limits struct {
	MaxBodyBytes                  int64
	BodyReadTimeout               time.Duration
	MaxResponseBytes              int64
	MaxSubscriptionsPerConnection int
	MaxSubscriptions              int
	MaxVariablesBytes             int64
	MaxInFlightPerPeer            int
	MaxExpensive                  int
}

func (l Limits) withDefaults() Limits {
	if l.MaxBodyBytes <= 0 {
		l.MaxBodyBytes = MaxBodyBytes
	}
	if l.BodyReadTimeout <= 0 {
		l.BodyReadTimeout = BodyReadTimeout
	}
	if l.MaxResponseBytes <= 0 {
		l.MaxResponseBytes = graph.MaxResponseBytes
	}
	if l.MaxSubscriptionsPerConnection <= 0 {
		l.MaxSubscriptionsPerConnection = MaxSubscriptionsPerConnection
	}
	if l.MaxSubscriptions <= 0 {
		l.MaxSubscriptions = MaxSubscriptions
	}
	if l.MaxVariablesBytes <= 0 {
		l.MaxVariablesBytes = MaxVariablesBytes
	}
	if l.MaxInFlightPerPeer <= 0 {
		l.MaxInFlightPerPeer = MaxInFlightPerPeer
	}
	if l.MaxExpensive <= 0 {
		l.MaxExpensive = MaxExpensive
	}
	return l
}
