// Package pubsub is the kernel's event broker: per-session subscriptions
// with coalescing of lossy deltas for slow subscribers, kernel-wide
// subscriptions, and the hand-off of published events to a cluster relay
// given at construction (Config.Relay).
//
// It imports only the standard library and core.
package pubsub
