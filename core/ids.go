package core

import (
	"crypto/rand"
	"encoding/hex"
)

// NewID returns a random identifier with a readable prefix, e.g. "ses_…".
func NewID(prefix string) string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand: " + err.Error()) // never fails on supported platforms
	}
	return prefix + "_" + hex.EncodeToString(b[:])
}
