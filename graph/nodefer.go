package graph

// Incremental delivery is not offered: gqlparser's prelude declares @defer,
// but gqlgen (v0.17.98) delivers deferred fragments only over its
// multipart/mixed transport, and over the JSON POST, SSE and WebSocket
// transports Foya serves it answered `... @defer` with the deferred fields
// null and hasNext: true and then ended. The directive is taken out of the
// schema, so introspection does not advertise it and a document that uses it
// fails validation ("Unknown directive"), the same on every transport. See
// docs/sse.md, "Incremental delivery". The refusal is the schema's (it edits
// gqlgen's parsed schema), so it lives here, not with the transports in edge.
func init() {
	delete(parsedSchema.Directives, "defer")
}
