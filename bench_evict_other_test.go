//go:build !linux

package main

import "errors"

func evictFromPageCache(string) error { return errors.New("-cold-binary needs Linux") }
