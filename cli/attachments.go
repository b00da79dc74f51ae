package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/internal/cmdutil"
)

// foya attachments: an attachment's bytes (an upload, or an image or video
// a tool generated) from the kernel's GET /attachments/{id}.

var attachmentsGroup = group{
	name: "attachments",
	doc:  "Stored attachments: uploads, and the images and videos tools generate.",
	subs: []subcommand{
		{Command: cmdutil.Command{Name: "attachments save", Synopsis: "ID [FILE] [--force] [--json]",
			Doc: `Saves an attachment's bytes to FILE: by default its own name (as uploaded
or generated) in the current directory, or in FILE when it is a directory;
- writes them to stdout. An existing FILE is kept unless --force; the file
appears whole or not at all.
foya exec prints the id of each attachment a tool returns.`},
			min: 1, max: 2, run: attachmentsSave},
	},
}

func attachmentsCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return attachmentsGroup.run(args, stdin, stdout, stderr)
}

func attachmentsSave(r *runner) error {
	force := r.fs.Bool("force", false, "replace FILE when it exists")
	rest, err := r.parse()
	if err != nil {
		return err
	}
	id, target := rest[0], ""
	if len(rest) == 2 {
		target = rest[1]
	}
	if !strings.HasPrefix(id, "att_") {
		return cmdutil.UsageError{Err: fmt.Errorf("%q is not an attachment id (att_…)", id)}
	}
	return r.withKernel(func(ctx context.Context, c *client.Client) error {
		if target == "-" {
			_, err := c.AttachmentTo(ctx, id, r.stdout)
			return err
		}
		// The bytes go to a temporary file beside the target, put in place
		// once complete: an interrupted transfer leaves nothing under the
		// name. An existing directory as FILE takes the attachment's name.
		dir := "."
		if target != "" {
			if fi, err := os.Stat(target); err == nil && fi.IsDir() {
				dir, target = target, ""
			} else {
				dir = filepath.Dir(target)
			}
		}
		tmp, err := os.CreateTemp(dir, ".foya-attachment-*")
		if err != nil {
			return fmt.Errorf("save attachment: %w", err)
		}
		defer os.Remove(tmp.Name()) // a no-op once renamed
		name, err := c.AttachmentTo(ctx, id, tmp)
		if cerr := tmp.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("save attachment: %w", cerr)
		}
		if err != nil {
			return err
		}
		if target == "" {
			target = filepath.Join(dir, safeFileName(name, id))
		}
		if *force {
			err = os.Rename(tmp.Name(), target)
		} else {
			// A link is made only where no file is: nothing created between
			// a check and the rename can be replaced.
			err = os.Link(tmp.Name(), target)
			if errors.Is(err, os.ErrExist) {
				return fmt.Errorf("%s exists: name another FILE or pass --force", target)
			}
		}
		if err != nil {
			return fmt.Errorf("save attachment: %w", err)
		}
		fi, err := os.Stat(target)
		if err != nil {
			return fmt.Errorf("save attachment: %w", err)
		}
		abs, _ := filepath.Abs(target)
		if r.cf.json {
			return printJSON(r.stdout, map[string]any{"id": id, "path": abs, "bytes": fi.Size()})
		}
		fmt.Fprintf(r.stdout, "saved %s to %s (%d bytes)\n", id, abs, fi.Size())
		return nil
	})
}

// safeFileName is the kernel's name for an attachment made fit to be a file
// in the current directory: its last element, without control characters,
// never empty, "." or "..", never hidden (id.bin otherwise).
func safeFileName(name, id string) string {
	name = filepath.Base(strings.ReplaceAll(name, `\`, "/"))
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, name)
	if name == "" || name == "." || name == ".." || name == "/" || strings.HasPrefix(name, ".") {
		return id + ".bin"
	}
	return name
}
