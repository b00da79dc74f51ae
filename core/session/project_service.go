package session

import (
	"context"
	"errors"
	"fmt"
	"github.com/foya-dev/foya/core"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// CreateProject records a directory reference. The path must be absolute
// and name an existing directory; the name defaults to its base name.
func (s *Service) CreateProject(ctx context.Context, in core.ProjectInput) (core.Project, error) {
	path := strings.TrimSpace(in.Path)
	if path == "" {
		return core.Project{}, core.Errorf(core.CodeBadInput, "path: give the absolute path of the project directory")
	}
	if !filepath.IsAbs(path) {
		return core.Project{}, core.Errorf(core.CodeBadInput, "path %q is relative; give an absolute path (the kernel's working directory is not yours)", path)
	}
	path = filepath.Clean(path)
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return core.Project{}, core.Errorf(core.CodeBadInput, "path %q does not exist; create the directory first", path)
	case err != nil:
		return core.Project{}, core.Errorf(core.CodeBadInput, "path %q cannot be read: %v", path, err)
	case !fi.IsDir():
		return core.Project{}, core.Errorf(core.CodeBadInput, "path %q is not a directory", path)
	}
	name := strings.TrimSpace(in.Name)
	if name == "" {
		name = core.StripUnsafe(filepath.Base(path))
	}
	if len([]rune(name)) > core.MaxProjectNameChars {
		return core.Project{}, core.Errorf(core.CodeBadInput, "name: at most %d characters", core.MaxProjectNameChars)
	}
	if msg := core.DisplayTextProblem(name); msg != "" {
		return core.Project{}, core.Errorf(core.CodeBadInput, "name: %s", msg)
	}
	p := core.Project{ID: core.NewID("prj"), Name: name, Path: path, CreatedAt: time.Now().UTC()}
	if err := s.store.CreateProject(ctx, p); err != nil {
		return core.Project{}, fmt.Errorf("create project: %w", err)
	}
	s.log.Info("project created", "project_id", p.ID, "path", p.Path)
	return p, nil
}

// Project returns one project.
func (s *Service) Project(ctx context.Context, id string) (core.Project, error) {
	return s.store.Project(ctx, id)
}

// Projects lists projects.
func (s *Service) Projects(ctx context.Context) ([]core.Project, error) {
	return s.store.Projects(ctx)
}

// RemoveProject deletes a project row whose sessions are gone.
func (s *Service) RemoveProject(ctx context.Context, id string) error {
	return s.store.DeleteProject(ctx, id)
}
