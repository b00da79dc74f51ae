// Package deptest holds the module's one table of allowed import edges
// (Rules) and the test that checks every package of the module against it
// with `go list -deps -json` (tailscale's tstest/deptest is the model).
//
// Each package of the module is governed by the most specific rule whose
// pattern matches it; it may import the standard library, the module
// packages and the third-party modules its rule lists, and nothing else.
// An edge that breaks a rule fails TestImportEdges with the package, the
// forbidden import and the rule.
//
// The package is imported by nothing and imports only the standard library.
package deptest
