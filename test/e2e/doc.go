// Package e2e holds Foya's end-to-end tests and benchmarks: they build the
// foya binary once (TestMain) and drive it as a user would — `foya serve`
// kernels over HTTP, WebSocket and SSE (through the typed client package
// where an operation exists, hand-written documents only where a test sends
// something raw on purpose), the CLI commands, the npm clients under test/
// (graphql-ws, graphql-http, the ACP SDK, MCP server-everything, Playwright)
// and headless Chromium. It also checks the examples in README.md and docs/
// against the schema and the commands' help.
//
// Paths (test/*, docs/, providers' recorded streams) are resolved against the
// module root, so the package runs from any directory:
//
//	go test ./test/e2e -count=1 -timeout 20m
//	go test ./test/e2e -run TestRestartKeepsDataAndResetsPhases -count=1
//	go test ./test/e2e -run '^$' -bench DeltaPath -benchtime 5x
//
// The package imports what a test needs to seed or inspect state (core,
// storage, providers' fakes) but never the daemon's wiring: the kernel under
// test is always the built binary.
package e2e
