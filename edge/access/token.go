package access

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// TokenFileName is the name of the bearer token file in the data directory.
const TokenFileName = "auth-token"

// minTokenLen is the shortest token accepted from a token file (a generated
// token is 43 characters: 256 bits, base64url without padding).
const minTokenLen = 32

// NewToken returns 256 random bits, base64url without padding.
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// ReadToken reads and validates the token stored in path.
func ReadToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read token file %s: %w", path, err)
	}
	tok := strings.TrimSpace(string(b))
	if err := validToken(tok); err != nil {
		return "", fmt.Errorf("token file %s: %w", path, err)
	}
	return tok, nil
}

func validToken(tok string) error {
	if len(tok) < minTokenLen {
		return fmt.Errorf("the token is shorter than %d characters (delete the file or run `foya token rotate` to generate one)", minTokenLen)
	}
	for _, c := range tok {
		if c <= ' ' || c > '~' {
			return errors.New("the token must be printable ASCII without spaces")
		}
	}
	return nil
}

// LoadOrCreateToken returns the token in path, creating the file (mode 0600,
// a new token) when it does not exist. created says whether it did. Two
// processes racing to create it end up with the same token.
func LoadOrCreateToken(path string) (tok string, created bool, err error) {
	tok, err = ReadToken(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return tok, false, err
	}
	tok, err = NewToken()
	if err != nil {
		return "", false, err
	}
	tmp, err := writeTemp(path, tok)
	if err != nil {
		return "", false, err
	}
	defer os.Remove(tmp)
	// A hard link never replaces an existing file: whoever links first wins.
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			tok, err = ReadToken(path)
			return tok, false, err
		}
		return "", false, fmt.Errorf("create token file %s: %w", path, err)
	}
	return tok, true, nil
}

// RotateToken replaces the token in path with a new one (written to a
// temporary file, then renamed over it, so a reader never sees half a token)
// and returns it.
func RotateToken(path string) (string, error) {
	tok, err := NewToken()
	if err != nil {
		return "", err
	}
	tmp, err := writeTemp(path, tok)
	if err != nil {
		return "", err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("replace token file %s: %w", path, err)
	}
	return tok, nil
}

func writeTemp(path, tok string) (string, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create token directory %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("write token file: %w", err)
	}
	name := f.Name()
	err = f.Chmod(0o600)
	if err == nil {
		_, err = f.WriteString(tok + "\n")
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", fmt.Errorf("write token file %s: %w", name, err)
	}
	return name, nil
}
