package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/internal/cmdutil"
)

// backupCommand is `foya backup FILE`: the kernel writes the copy
// (backupDatabase), since it holds foya.db exclusively while it runs.
var backupCommand = subcommand{
	Command: cmdutil.Command{Name: "backup", Synopsis: "FILE [--json]",
		Doc: `Writes a consistent copy of the kernel's database (foya.db: sessions,
events, usage, projects) to FILE, a new file, while the kernel runs: the
kernel holds foya.db exclusively, so sqlite3 cannot read it then. The kernel
writes the file (mode 0600) on its machine; a relative FILE is taken from the
current directory. FILE must not exist and its directory must. The copy
opens as a data directory's foya.db. connections.json, mcp.json and artifacts/
are not in it: copy them too (or stop the kernel and copy the whole data
directory). On PostgreSQL use pg_dump.`},
	min: 1, max: 1, run: backup,
}

func backupCmd(args []string, stdout, stderr io.Writer) error {
	return backupCommand.exec(args, nil, stdout, stderr)
}

func backup(r *runner) error {
	rest, err := r.parse()
	if err != nil {
		return err
	}
	path, err := filepath.Abs(rest[0])
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	return r.withKernel(func(ctx context.Context, c *client.Client) error {
		resp, err := client.BackupDatabase(ctx, c, path)
		if err != nil {
			return err
		}
		if r.cf.json {
			return printJSON(r.stdout, map[string]string{"path": resp.BackupDatabase})
		}
		fmt.Fprintf(r.stdout, "backed up the database to %s\n", resp.BackupDatabase)
		return nil
	})
}
