package core

import ()

// RewindFile is what a rewind does to one file.
type RewindFile struct {
	Path       string `json:"path"`
	Action     string `json:"action"`
	Restorable bool   `json:"restorable"`
	Reason     string `json:"reason,omitempty"`
	// Restored is set by confirm: the file was put back.
	Restored bool `json:"restored,omitempty"`

	// Target, Expected and Mode are the engine's restore plan; they are
	// never serialised.
	Target   string `json:"-"` // hash to restore ("" = absent)
	Expected string `json:"-"` // hash the session last left ("" = absent)
	Mode     uint32 `json:"-"` // recorded permission bits of the content to restore (0: not recorded)
}
