// Package model holds the GraphQL types that are not core types:
// gqlgen's generated input and output structs (models_gen.go) and the
// hand-written SessionEvent view of a core.Event. It imports core and
// graph/scalar only.
package model
