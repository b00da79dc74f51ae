// Package access holds what a client and the kernel share about reaching
// the kernel: the bearer token file in the data directory, the web link
// that carries a token, and which host names are loopback. It is standard
// library only, so that the cli imports it without any server code.
package access
