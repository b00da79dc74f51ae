package daemon

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/foya-dev/foya/internal/cmdutil"
	"github.com/foya-dev/foya/storage"
)

var secretKeyCommand = cmdutil.Command{
	Name:     "secret-key",
	Synopsis: "rotate NEW_KEY_FILE [--data-dir DIR] [--database postgres://…] [--secret-key-file PATH]",
	Doc: `The key that seals secrets at rest (docs/postgresql.md): connections' API
keys and MCP servers' env, header and OAuth values in a shared PostgreSQL
catalog, and the MCP OAuth grants on any database.

  rotate NEW_KEY_FILE   re-seal every secret under the key in NEW_KEY_FILE
                        (made, 32 random bytes, when it does not exist), in
                        one transaction, then put that key in
                        --secret-key-file; the previous key is kept beside it
                        as <file>.old for backups made before. Stop every
                        kernel on the database first: one still running is
                        refused, and other nodes need the new file copied
                        before they start again.`,
}

// SecretKey is `foya secret-key`: it rotates the key that seals the
// database's secrets, with the kernels stopped.
func SecretKey(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cmdutil.NewFlagSet(secretKeyCommand, stdout)
	dataDir := fs.String("data-dir", cmdutil.DefaultDataDir(), "data directory of the kernel")
	database := fs.String("database", os.Getenv("FOYA_DATABASE"), "PostgreSQL URL (default $FOYA_DATABASE; empty: SQLite in the data directory)")
	keyFile := fs.String("secret-key-file", "", "the current key, as the kernels run with it (default <data-dir>/secret-key)")
	rest, err := cmdutil.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 2 || rest[0] != "rotate" {
		return cmdutil.UsageError{Err: errors.New("usage: foya secret-key rotate NEW_KEY_FILE [--data-dir DIR] [--database URL] [--secret-key-file PATH]")}
	}
	dir, err := cmdutil.PrepareDataDir(*dataDir)
	if err != nil {
		return err
	}
	current := *keyFile
	if current == "" {
		current = filepath.Join(dir, storage.SecretKeyFileName)
	}
	next, err := filepath.Abs(rest[1])
	if err != nil {
		return fmt.Errorf("new key file: %w", err)
	}
	if cur, _ := filepath.Abs(current); cur == next {
		return cmdutil.UsageError{Err: errors.New("NEW_KEY_FILE is the current key file: name another file for the new key")}
	}
	// The current key must exist: a missing file would be made anew, and a
	// new key opens nothing.
	if _, err := os.Stat(current); err != nil {
		return fmt.Errorf("the current key %s: %w (name it with --secret-key-file)", current, err)
	}
	oldKey, err := storage.LoadOrCreateSecretKey(current)
	if err != nil {
		return err
	}
	newKey, err := storage.LoadOrCreateSecretKey(next)
	if err != nil {
		return err
	}
	if bytes.Equal(oldKey, newKey) {
		return errors.New("the new key is the current key: nothing to rotate")
	}
	from, err := storage.NewSealer(oldKey)
	if err != nil {
		return err
	}
	to, err := storage.NewSealer(newKey)
	if err != nil {
		return err
	}

	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	db, closeDB, err := openStopped(ctx, dir, *database, log)
	if err != nil {
		return err
	}
	defer closeDB()
	if *database != "" {
		live, err := db.LiveNodes(ctx)
		if err != nil {
			return err
		}
		if len(live) > 0 {
			return fmt.Errorf("kernels still run on this database (nodes %s, heard from in the last minute): stop every kernel on it first", strings.Join(live, ", "))
		}
	}
	n, err := db.RotateSecretKey(ctx, from, to)
	if err != nil {
		return err
	}
	// The database now opens with the new key only: the current file takes
	// it (the previous one kept as .old, for backups sealed under it).
	if err := replaceKeyFile(current, oldKey, newKey); err != nil {
		return fmt.Errorf("the secrets are sealed under the key in %s, but %s could not take it (copy it there by hand): %w", next, current, err)
	}
	fmt.Fprintf(stdout, "re-sealed %d secrets under the new key; %s now holds it (the previous key is in %s.old)\n", n, current, current)
	if *database != "" {
		fmt.Fprintf(stdout, "copy %s to every other kernel's --secret-key-file before starting it\n", current)
	}
	return nil
}

// replaceKeyFile writes oldKey to path.old and newKey to path, each through
// a private temporary file renamed into place.
func replaceKeyFile(path string, oldKey, newKey []byte) error {
	for _, f := range []struct {
		path string
		key  []byte
	}{{path + ".old", oldKey}, {path, newKey}} {
		tmp, err := os.CreateTemp(filepath.Dir(path), ".secret-key-*")
		if err != nil {
			return err
		}
		_, werr := tmp.WriteString(base64.StdEncoding.EncodeToString(f.key) + "\n")
		if err := errors.Join(werr, tmp.Chmod(0o600), tmp.Sync(), tmp.Close()); err != nil {
			os.Remove(tmp.Name())
			return err
		}
		if err := os.Rename(tmp.Name(), f.path); err != nil {
			os.Remove(tmp.Name())
			return err
		}
	}
	return nil
}
