package core

import ()

// ProjectInput creates a project.
type ProjectInput struct {
	Name string
	Path string
}
