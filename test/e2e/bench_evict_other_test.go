//go:build !linux

package e2e

import "errors"

func evictFromPageCache(string) error { return errors.New("-cold-binary needs Linux") }
