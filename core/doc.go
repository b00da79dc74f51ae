// Package core is the domain root of the Foya kernel: the types every other
// package speaks (Session, Message, Event and its payloads, Connection,
// Model, Route, Usage, MCPServer, Attachment, …), the errors and their codes
// (Error, Errorf, Code*), ids, small text helpers, and the interfaces the
// kernel needs from outside (EventStore, SessionStore, CatalogStore,
// MCPStore, HistoryStore, BlobStore, AttachmentStore, Provider,
// ProviderLookup, ToolRunner, HookRunner, EventRelay, …).
//
// core holds no services. They live in the packages under it, each named
// after what it owns: pubsub, catalog, mcp, hooks, archive, session and
// engine (see docs/architecture.md). core and every package under it import
// only the standard library, core and packages under core, arrows pointing
// down (internal/deptest's table enforces it). Adapters (storage, plugins, graph) implement or call these
// names from outside.
package core
