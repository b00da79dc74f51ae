package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/internal/cmdutil"
)

var projectsGroup = group{
	name: "projects",
	doc:  "Projects: directories sessions work in.",
	subs: []subcommand{
		{Command: cmdutil.Command{Name: "projects list", Synopsis: "[--json]", Doc: "Lists the projects."},
			aliases: []string{"ls"}, max: 0, run: projectsList},
		{Command: cmdutil.Command{Name: "projects trust", Synopsis: "PATH", Doc: "Trusts PATH/.foya/hooks.json as it is now, so its hooks run (docs/hooks.md)."},
			min: 1, max: 1, run: projectsTrust},
	},
}

func projectsCmd(args []string, stdout, stderr io.Writer) error {
	return projectsGroup.run(args, nil, stdout, stderr)
}

func projectsList(r *runner) error {
	if _, err := r.parse(); err != nil {
		return err
	}
	return r.withKernel(func(ctx context.Context, c *client.Client) error {
		resp, err := client.Projects(ctx, c)
		if err != nil {
			return err
		}
		ps := make([]client.ProjectFields, len(resp.Projects))
		rows := make([][]string, len(resp.Projects))
		for i, p := range resp.Projects {
			ps[i] = p.ProjectFields
			rows[i] = []string{p.Name, p.Path, p.Id}
		}
		if r.cf.json {
			return printJSON(r.stdout, ps)
		}
		return table(r.stdout, "NAME\tPATH\tID", rows)
	})
}

func projectsTrust(r *runner) error {
	rest, err := r.parse()
	if err != nil {
		return err
	}
	path, err := filepath.Abs(rest[0])
	if err != nil {
		return err
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	return r.withKernel(func(ctx context.Context, c *client.Client) error {
		p, err := findOrCreateProject(ctx, c, path)
		if err != nil {
			return err
		}
		resp, err := client.TrustProject(ctx, c, p.Id)
		if err != nil {
			return err
		}
		if r.cf.json {
			return printJSON(r.stdout, resp.TrustProject)
		}
		fmt.Fprintf(r.stdout, "trusted %s\n", resp.TrustProject.Path)
		return nil
	})
}

// findProject is the project whose directory is path (absolute), if any.
func findProject(ctx context.Context, c *client.Client, path string) (*client.ProjectFields, error) {
	resp, err := client.Projects(ctx, c)
	if err != nil {
		return nil, err
	}
	for _, p := range resp.Projects {
		if filepath.Clean(p.Path) == path {
			return &p.ProjectFields, nil
		}
	}
	return nil, nil
}

// findOrCreateProject is the project of directory path (absolute), created
// when missing.
func findOrCreateProject(ctx context.Context, c *client.Client, path string) (client.ProjectFields, error) {
	p, err := findProject(ctx, c, path)
	if err != nil || p != nil {
		if p == nil {
			return client.ProjectFields{}, err
		}
		return *p, nil
	}
	resp, err := client.CreateProject(ctx, c, path)
	if err != nil {
		return client.ProjectFields{}, err
	}
	return resp.CreateProject.ProjectFields, nil
}
