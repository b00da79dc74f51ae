// Package edge is the kernel's HTTP edge: it builds the http.Handler that
// serves graph's executable schema and everything around it.
//
//   - transports: GraphQL over HTTP (GET and JSON POST), SSE with resumable
//     session streams, graphql-transport-ws (and gqlgen's legacy
//     graphql-ws), multipart uploads;
//   - bearer-token auth (the token file itself is package edge/access), the
//     browser guard (Host, Origin, CORS) and the debug guard for --pprof;
//   - request bounds: body and variables limits, per-peer and expensive
//     admission, query cost and depth, subscription caps, WebSocket message
//     size (limits.go lists them);
//   - cluster forwarding of operations to a session's owner, HMAC-signed,
//     and the owner's in-memory state endpoint;
//   - the streamed session export route;
//   - Foya web and the GraphiQL playground (package edge/web).
//
// edge imports graph, core/..., edge/access and edge/web; graph never imports
// edge.
package edge
