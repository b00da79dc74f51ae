//go:build !linux

package tools

import "os"

// nonBlock is 0 off Linux.
const nonBlock = 0

// fdPath is unknown off Linux: os.Root alone keeps opens in the scope.
func fdPath(*os.File) (string, bool) { return "", false }
