package core

import ()

// MaxFileChangePath bounds the path of one recorded file change (PATH_MAX).
const MaxFileChangePath = 4096
