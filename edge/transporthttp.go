package edge

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/graph"
)

// The response media types of GraphQL over HTTP.
const (
	mediaJSON            = "application/json"
	mediaGraphQLResponse = "application/graphql-response+json"
)

// httpGraphQL is GraphQL over HTTP as the spec's current draft says
// (graphql.github.io/graphql-over-http), for POST with a JSON body and GET:
//
//   - The response is application/graphql-response+json when the Accept
//     header prefers it, else application/json (no Accept, */*, or
//     application/json).
//   - A request error (the body or parameters are not a GraphQL request,
//     or the document does not parse, validate or take its variables) has
//     no "data" key; its status is 400 under application/graphql-response+json
//     and 200 under application/json (so that legacy clients read the
//     errors), except for a body or parameters that are not a GraphQL
//     request at all: 400 under both.
//   - A mutation over GET is 405 with Allow: POST.
//
// Subscriptions are refused here (nonStreaming): they need SSE or WebSocket.
type httpGraphQL struct{}

var _ graphql.Transport = httpGraphQL{}

func (httpGraphQL) Supports(r *http.Request) bool {
	if isUpgrade(r) {
		return false
	}
	switch r.Method {
	case http.MethodGet:
		return true
	case http.MethodPost:
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		return err == nil && mt == mediaJSON
	}
	return false
}

func (httpGraphQL) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	media := responseMedia(r.Header.Values("Accept"))
	w.Header().Set("Content-Type", media)
	start := graphql.Now()
	params, msg := readHTTPParams(r)
	if msg != "" {
		writeRequestError(w, http.StatusBadRequest, gqlerror.List{{Message: msg, Extensions: map[string]any{"code": string(core.CodeBadInput)}}})
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	ctx := r.Context()
	if r.Method == http.MethodGet && isMutation(params) {
		w.Header().Set("Allow", http.MethodPost)
		writeRequestError(w, http.StatusMethodNotAllowed, gqlerror.List{{
			Message:    "GET runs queries only; send mutations with POST, subscriptions with POST and Accept: text/event-stream or over WebSocket",
			Extensions: map[string]any{"code": string(core.CodeBadInput)},
		}})
		return
	}
	oc, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil {
		resp := exec.DispatchError(graphql.WithOperationContext(ctx, oc), errs)
		status := http.StatusOK
		if media == mediaGraphQLResponse {
			status = http.StatusBadRequest
		}
		writeRequestError(w, status, resp.Errors)
		return
	}
	ctx, note := graph.WithDataNote(ctx)
	responses, ctx := noSubscriptions{exec}.DispatchOperation(ctx, oc)
	resp := responses(ctx)
	if resp == nil {
		resp = &graphql.Response{Errors: gqlerror.List{{Message: "the operation gave no response", Extensions: map[string]any{"code": string(core.CodeInternal)}}}}
	}
	if resp.Data == nil && len(resp.Errors) > 0 {
		// Refused before execution (a subscription here, a request limit).
		status := http.StatusOK
		if media == mediaGraphQLResponse {
			status = http.StatusBadRequest
		}
		writeRequestError(w, status, resp.Errors)
		return
	}
	if note.Release != nil {
		defer note.Release() // (after the last use of resp.Data below)
	}
	if note.Compact && len(resp.Errors) == 0 && resp.Label == "" && resp.Path == nil && resp.HasNext == nil && len(resp.Extensions) == 0 {
		// Data graph wrote by hand: already compact JSON (graph.DataNote),
		// sent as it is around it, with its length (net/http then writes
		// a large part straight to the connection, neither copied nor
		// chunked).
		const open, close = `{"data":`, `}`
		w.Header().Set("Content-Length", strconv.Itoa(len(open)+len(resp.Data)+len(close)))
		_, _ = io.WriteString(w, open)
		_, _ = w.Write(resp.Data)
		_, _ = io.WriteString(w, close)
		return
	}
	b, err := json.Marshal(resp)
	if err != nil {
		writeRequestError(w, http.StatusInternalServerError, gqlerror.List{{Message: "could not encode the response", Extensions: map[string]any{"code": string(core.CodeInternal)}}})
		return
	}
	_, _ = w.Write(b)
}

// writeRequestError writes a response with errors and no "data" key.
func writeRequestError(w http.ResponseWriter, status int, errs gqlerror.List) {
	b, _ := json.Marshal(struct {
		Errors gqlerror.List `json:"errors"`
	}{errs})
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// responseMedia picks the response media type from Accept: the one of
// application/graphql-response+json and application/json with the higher
// q (the first listed on a tie); application/json for anything else.
func responseMedia(accept []string) string {
	best, bestQ := mediaJSON, -1.0
	for _, v := range accept {
		for _, part := range strings.Split(v, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			q := 1.0
			if s, ok := params["q"]; ok {
				if f, err := strconv.ParseFloat(s, 64); err == nil {
					q = f
				}
			}
			if q <= 0 {
				continue
			}
			switch mt {
			case mediaGraphQLResponse, mediaJSON:
			case "*/*", "application/*":
				mt = mediaJSON
			default:
				continue
			}
			if q > bestQ {
				best, bestQ = mt, q
			}
		}
	}
	return best
}

// readHTTPParams reads the GraphQL request of a GET (URL parameters) or a
// POST (JSON body); msg says why it is not one.
func readHTTPParams(r *http.Request) (*graphql.RawParams, string) {
	p := &graphql.RawParams{}
	if r.Method == http.MethodGet {
		q, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			return nil, "the URL query string does not parse: " + graph.ClipText(err.Error(), graph.MaxEchoBytes)
		}
		p.Query, p.OperationName = q.Get("query"), q.Get("operationName")
		if v := q.Get("variables"); v != "" {
			if decodeJSON(v, &p.Variables) != nil {
				return nil, "the variables parameter must be a JSON object"
			}
		}
		if v := q.Get("extensions"); v != "" {
			if decodeJSON(v, &p.Extensions) != nil {
				return nil, "the extensions parameter must be a JSON object"
			}
		}
	} else {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, "could not read the request body: " + graph.ClipText(err.Error(), graph.MaxEchoBytes)
		}
		var raw map[string]json.RawMessage
		if decodeJSON(string(body), &raw) != nil || raw == nil {
			return nil, `the request body must be a JSON object {"query": "…", "variables": {…}, "operationName": "…"}`
		}
		for name, into := range map[string]any{"query": &p.Query, "operationName": &p.OperationName, "variables": &p.Variables, "extensions": &p.Extensions} {
			v, ok := raw[name]
			if !ok || string(bytes.TrimSpace(v)) == "null" {
				continue
			}
			if decodeJSON(string(v), into) != nil {
				kind := "a string"
				if name == "variables" || name == "extensions" {
					kind = "an object"
				}
				return nil, "the " + name + " parameter must be " + kind + " or null"
			}
		}
	}
	if p.Query == "" && p.Extensions == nil {
		return nil, "no query: send the GraphQL document as the query parameter"
	}
	return p, ""
}

func decodeJSON(s string, v any) error {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more than one JSON value")
	}
	return nil
}

// isMutation says whether the operation params selects is a mutation,
// however invalid the rest of the document.
func isMutation(p *graphql.RawParams) bool {
	doc, err := parser.ParseQuery(&ast.Source{Input: p.Query})
	if err != nil {
		return false
	}
	var op *ast.OperationDefinition
	if p.OperationName == "" {
		if len(doc.Operations) == 1 {
			op = doc.Operations[0]
		}
	} else {
		op = doc.Operations.ForName(p.OperationName)
	}
	return op != nil && op.Operation == ast.Mutation
}
