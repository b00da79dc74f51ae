package graph

// Hooks for the external tests of this package (package graph_test).

// SessionListServed counts the operations SessionList answered by hand.
var SessionListServed = &sessionListServed
